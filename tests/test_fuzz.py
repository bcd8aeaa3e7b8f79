"""Fuzzing the whole per-paragraph function with generated LaTeX, markdown, mojibake and mixed scripts:
no exception and no ``processing_error`` on any of it, and on well-formed LaTeX no macro name left
glued to a word. The suite runs the hypothesis profile's count; ``make fuzz`` runs many more."""

import re
from pathlib import Path

import ftfy.bad_codecs  # noqa: F401 - registers ftfy's sloppy-windows-125x codecs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpus_hygiene.clean.latex.markup import OPERATORS
from corpus_hygiene.models import Header, Paragraph, Record, SourceFile
from corpus_hygiene.pipeline.process import process_paragraph

# the bombs' reprs are megabytes long: hypothesis warns while describing them
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
SOURCE = SourceFile("fuzz.txt", Path("/nonexistent/fuzz.txt"), 0)
HEADER = Header(1, "ICLR 2026 Papers", "ICLR", 2026, "ICLR 2026 Papers", "en")
# words that contain no macro name below, so that a glued name shows as a word outside this list
WORDS = ("graph", "model", "data", "query", "study", "robust", "fast", "cache", "shard", "vocab")
SYMBOLS = (
    "alpha beta gamma ne neq land lor lnot le ge in to infty times cdot pm approx sim equiv upalpha "
    "partial nabla forall exists subset cup cap rightarrow mapsto ell hbar emptyset"
).split()
TEXT_MACROS = ("textbf", "emph", "textit", "texttt", "mbox", "underline", "textsc", "method", "footnote")
ENVIRONMENTS = ("itemize", "center", "quote", "abstract", "theorem", "someenv")
MATH_ENVIRONMENTS = ("equation", "equation*", "align", "align*", "gather", "multline", "eqnarray")

word = st.sampled_from(WORDS)
math_atom = st.one_of(
    word.map(lambda w: f" {w[:1]} "),
    st.sampled_from(SYMBOLS).map(lambda m: f"\\{m} "),
    st.sampled_from(sorted(OPERATORS)).map(lambda m: f"\\{m} "),
    st.integers(0, 99).map(str),
    st.sampled_from([" + ", " = ", "(", ")", ", "]),
)
math_body = st.recursive(
    st.lists(math_atom, min_size=1, max_size=6).map("".join),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from("^_"), inner).map(lambda t: f"{t[0]}{t[1]}{{{t[2]}}}"),
        st.tuples(inner, inner).map(lambda t: f"\\frac{{{t[0]}}}{{{t[1]}}}"),
        inner.map(lambda x: f"\\sqrt{{{x}}}"),
        st.tuples(st.sampled_from(["2", "3", "n"]), inner).map(lambda t: f"\\sqrt[{t[0]}]{{{t[1]}}}"),
        st.tuples(inner, inner).map(
            lambda t: f"\\begin{{pmatrix}} {t[0]} & {t[1]} \\\\ {t[1]} & {t[0]} \\end{{pmatrix}}"
        ),
        inner.map(lambda x: f"\\operatorname*{{{x}}}"),
        inner.map(lambda x: f"\\mathrm{{{x}}}"),
    ),
    max_leaves=8,
)
math = st.one_of(
    math_body.map(lambda m: f"${m}$"),
    math_body.map(lambda m: f"\\[ {m} \\]"),
    st.tuples(st.sampled_from(MATH_ENVIRONMENTS), math_body, math_body).map(
        lambda t: f"\\begin{{{t[0]}}} {t[1]} &= {t[2]} \\\\ {t[2]} \\end{{{t[0]}}}"
    ),
)
latex = st.recursive(
    st.one_of(word, math, st.sampled_from(["--", "---", "``x''", "Fig.~3", "40%", "R&D", "$5", "\\L ukasz"])),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=6).map(" ".join),
        st.tuples(st.sampled_from(TEXT_MACROS), inner).map(lambda t: f"\\{t[0]}{{{t[1]}}}"),
        st.tuples(st.sampled_from(["section", "section*", "subsection"]), inner).map(
            lambda t: f"\\{t[0]}{{{t[1]}}}"
        ),
        st.tuples(st.sampled_from(ENVIRONMENTS), inner).map(
            lambda t: f"\\begin{{{t[0]}}}[opt] {t[1]} \\end{{{t[0]}}}"
        ),
        inner.map(lambda x: f"\\begin{{tabular}}{{|c|l|}} {x} & {x} \\\\ \\hline {x} & {x} \\end{{tabular}}"),
        inner.map(lambda x: f"{x}~\\cite[p.~2]{{key}}"),
        inner.map(lambda x: f"\\href{{http://x.org/a%20b}}{{{x}}}"),
        inner.map(lambda x: f"\\footnote[2]{{{x}}}"),
        inner.map(lambda x: f"\\item {x}"),
    ),
    max_leaves=12,
)
hostile_piece = st.sampled_from(
    [
        "{",
        "}",
        "$",
        "$$",
        "\\",
        "\\\\",
        "&",
        "%",
        "#",
        "~",
        "^",
        "_",
        "\\def\\x{\\x}",
        "\\newcommand{\\y}[1]{\\y{#1}}",
        "\\sqrt[3]{",
        "\\href{http://x%20y}{",
        "\\begin{equation}",
        "\\end{align}",
        "\\begin{tabular}{",
        "\\verb|",
        "\\left(",
        "\\frac{",
        "\\textbf{",
        "\\item[",
        "\\section*[",
        "\\'",
        '\\"{',
        "**",
        "__",
        "`",
        "[link](http://x)",
        "> ",
        "# ",
    ]
)
hostile = st.lists(st.one_of(hostile_piece, latex, st.text(max_size=20)), max_size=20).map("".join)
bombs = st.one_of(
    st.integers(1, 6000).map(lambda n: "{" * n + "text" + "}" * (n // 2)),
    st.integers(1, 20000).map(lambda n: "$" * n),
    st.integers(1, 3000).map(lambda n: "\\textbf{" * n + "deep"),
    st.integers(1, 2000).map(lambda n: "$x" + "^{" * n + "y" + "}" * n + "$"),
    st.integers(1, 2000).map(lambda n: "\\begin{itemize}" * n),
    st.integers(1, 3000).map(lambda n: "*a **b *c " * n),  # emphasis that never closes
    st.integers(1, 6000).map(lambda n: "_a_" * n + "`" * n),
)
scripts = st.text(
    alphabet=st.characters(
        whitelist_categories=("Ll", "Lu", "Lo", "Mn", "Mc", "Nd", "Zs", "Po", "Sm"), max_codepoint=0x1FFFF
    ),
    max_size=300,
)
MISREADINGS = (
    "sloppy-windows-1252",
    "latin-1",
    "sloppy-windows-1251",
    "macroman",
    "cp437",
    "sloppy-windows-1250",
)
mojibake = st.tuples(scripts, st.sampled_from(MISREADINGS)).map(lambda t: t[0].encode("utf-8").decode(t[1]))


def _process(text: str):
    return process_paragraph(SOURCE, HEADER, Paragraph(3, text), _policy())


_POLICY = []


def _policy():
    if not _POLICY:
        from checks import load_policy

        _POLICY.append(load_policy())
    return _POLICY[0]


@given(st.one_of(hostile, bombs, mojibake, scripts, st.tuples(mojibake, latex, scripts).map(" ".join)))
def test_no_generated_paragraph_raises_or_becomes_a_processing_error(text):
    out = _process(text)
    assert isinstance(out, Record) or out.reason != "processing_error", out


_TOKEN = re.compile(r"[A-Za-z]{2,}")
ALLOWED = set(WORDS) | OPERATORS | {"mod", "opt", "Fig", "ukasz", "http", "org"}


@given(latex)
def test_well_formed_latex_leaves_no_macro_name_glued_to_a_word(text):
    out = _process(text)
    assert isinstance(out, Record) or out.reason != "processing_error", out
    cleaned = out.text if isinstance(out, Record) else ""
    assert "\\" not in cleaned, cleaned
    glued = [t for t in _TOKEN.findall(cleaned) if t not in ALLOWED and t.lower() not in ALLOWED]
    assert not glued, (text, cleaned, glued)
