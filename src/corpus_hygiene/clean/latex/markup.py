"""What the converter knows of LaTeX: the macro and environment classes it treats alike, the placeholders
that keep converted pieces out of pylatexenc's reach, and pylatexenc itself on one fragment at a time."""

from __future__ import annotations

import re
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

MAX_DEPTH = 40  # nested groups converted; deeper ones are flattened (no recursion on hostile input)

# ---- placeholders: private-use characters pylatexenc passes through untouched ---------------------
_PH_OPEN, _PH_CLOSE = "\ue000", "\ue001"
_PH = re.compile(f"{_PH_OPEN}(\\d+){_PH_CLOSE}")
# around an operator's word in math: a space where it meets a letter or digit ("n log n"), else none
WORD_OPEN, WORD_CLOSE = "\ue002", "\ue003"
PRIVATE = re.compile("[\ue000-\ue004]")


class Shelf:
    """Keeps pieces of text out of pylatexenc's reach and puts them back afterwards."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def put(self, text: str) -> str:
        self.items.append(text)
        return f"{_PH_OPEN}{len(self.items) - 1}{_PH_CLOSE}"

    def restore(self, text: str) -> str:
        for _ in range(3):  # placeholders can nest (a URL inside a protected math span)
            text = _PH.sub(lambda m: self.items[int(m.group(1))], text)
            if _PH_OPEN not in text:
                break
        return text


# ---- macro classes ------------------------------------------------------------------------------
# Macros whose argument is prose or a name: it is kept, converted (the ``words_kept`` class).
KEEP_ARGUMENT = frozenset(
    (
        "text textrm textsf texttt textsc textup textmd textbf textit textsl textnormal emph mbox hbox "
        "underline uline mathrm mathit mathbf mathsf mathtt mathnormal operatorname boldsymbol bm pmb "
        "textsuperscript textsubscript title author date caption fbox framebox makebox parbox raisebox "
        "textcolor colorbox hyperref hyperlink hypertarget thanks subtitle paragraph subparagraph"
    ).split()
)
# Of these, the ones whose last mandatory argument alone is text (the others are a colour, a size…).
LAST_ARGUMENT = frozenset("textcolor colorbox parbox raisebox hyperlink hypertarget".split())
HEADINGS = frozenset("part chapter section subsection subsubsection".split())
# Macros dropped with their arguments: citation keys, labels, layout, definitions (``citations_dropped``).
DROPPED = frozenset(
    (
        "cite citep citet citealp citealt citeauthor citeyear citenum nocite ref eqref autoref cref Cref "
        "pageref label vspace hspace color includegraphics tag nonumber notag footnotemark hline cline "
        "toprule midrule bottomrule cmidrule bibliography bibliographystyle index usepackage "
        "documentclass setlength addtolength setcounter newcommand renewcommand providecommand "
        "DeclareMathOperator newenvironment renewenvironment newtheorem def let maketitle tableofcontents "
        "listoffigures listoftables printbibliography appendix clearpage newpage pagebreak"
    ).split()
)
# Argument specs ("*" a star, "[" an optional argument, "{" a mandatory one) where pylatexenc has none or
# another: name:spec pairs.
ARGSPECS = dict(
    pair.split(":")
    for pair in """
    href:{{ operatorname:*{ caption:*[{ fbox:{ framebox:[[{ makebox:[[{ parbox:[[[{{ raisebox:{[[{
    hyperref:[{ hyperlink:{{ hypertarget:{{ textsuperscript:{ textsubscript:{ overset:{{ underset:{{
    stackrel:{{ tag:*{ footnotemark:[ thanks:{ newtheorem:*{[{[ cmidrule:[{ cline:{ pmod:{ mod:{ pod:{
    title:[{ author:[{ subtitle:{ part:*[{ paragraph:*[{ includegraphics:*[[{ bibliographystyle:{ index:{
    setlength:{{ addtolength:{{ setcounter:{{ ref:*{ eqref:*{ autoref:*{ cref:*{ Cref:*{ pageref:*{
    citeyear:*[[{ citenum:*[[{ nocite:*[[{
    """.split()
)

# Symbols pylatexenc has no text for; upgreek's upright letters (\upalpha) are handled by name.
SYMBOLS = dict(
    zip(
        (
            "ne neq land lor lnot neg bot ddagger ddag gets iff implies impliedby Re Im triangle Box "
            "models checkmark coloneqq colon S P copyright pounds euro degree textdegree textless "
            "textgreater textbar textasciicircum textunderscore"
        ).split(),
        "≠≠∧∨¬¬⊥‡‡←⟺⟹⟸ℜℑ△□⊨✓≔:§¶©£€°°<>|^_",
        strict=True,
    )
)
SYMBOLS["bmod"] = f"{WORD_OPEN}mod{WORD_CLOSE}"  # an operator's word (``words_spaced``)
# Operators printed as their name ("log", "max"), standing apart from letters and digits.
OPERATORS = frozenset(
    (
        "log ln lg exp sin cos tan sec csc cot arcsin arccos arctan sinh cosh tanh coth max min arg argmax "
        "argmin det dim lim liminf limsup sup inf Pr ker deg gcd lcm hom"
    ).split()
)
GREEK = frozenset(
    (
        "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi "
        "varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi "
        "Pi Sigma Upsilon Phi Psi Omega"
    ).split()
)
SIZING = frozenset(
    (
        "left right big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr displaystyle textstyle scriptstyle "
        "scriptscriptstyle limits nolimits middle"
    ).split()
)
SPACES = {",": " ", ";": " ", ":": " ", ">": " ", " ": " ", "\n": " ", "\t": " ", "\r": " "}
NOTHING = frozenset("!-/@")
SPACE_WORDS = frozenset(
    "quad qquad enspace thinspace medspace thickspace newline linebreak par break".split()
)
ACCENT_MACROS = frozenset("\"'`^~=.uvHcdbtrk")
# Environments by how their body reads.
MATH_ENVIRONMENTS = frozenset(
    "equation align alignat flalign gather multline eqnarray displaymath math dmath subequations".split()
)
ROWS_ENVIRONMENTS = frozenset("aligned alignedat gathered split multlined".split())  # in math: & aligns
MATRICES = {
    "matrix": ("", ""),
    "smallmatrix": ("", ""),
    "array": ("", ""),
    "cases": ("", ""),
    "pmatrix": ("(", ")"),
    "bmatrix": ("[", "]"),
    "Bmatrix": ("{", "}"),
    "vmatrix": ("|", "|"),
    "Vmatrix": ("‖", "‖"),
}
TABLES = {
    "tabular": "{",
    "tabular*": "{{",
    "tabularx": "{{",
    "longtable": "[{",
    "array": "[{",
    "tabulary": "{{",
}


def upright_greek(name: str) -> str | None:
    """upgreek's ``\\upalpha``/``\\Upgamma``: the Greek macro it is an upright form of."""
    if name.startswith("up") and name[2:] in GREEK:
        return name[2:]
    if name.startswith("Up") and name[2:].capitalize() in GREEK:
        return name[2:].capitalize()
    return None


# ---- pylatexenc, one fragment at a time -------------------------------------------------------------
@lru_cache(maxsize=1)
def latex_context():
    db = get_default_latex_context_db().filter_context(keep_categories=None)
    db.add_context_category(
        "corpus-hygiene",
        prepend=True,
        macros=[
            MacroTextSpec("LaTeX", simplify_repl="LaTeX"),
            MacroTextSpec("TeX", simplify_repl="TeX"),
            MacroTextSpec("prime", simplify_repl="′"),
            MacroTextSpec("|", simplify_repl="‖"),
            MacroTextSpec("Vert", simplify_repl="‖"),
            MacroTextSpec("lVert", simplify_repl="‖"),
            MacroTextSpec("rVert", simplify_repl="‖"),
            MacroTextSpec("vert", simplify_repl="|"),
            MacroTextSpec("lvert", simplify_repl="|"),
            MacroTextSpec("rvert", simplify_repl="|"),
        ],
    )
    return db


@lru_cache(maxsize=4096)
def has_text_rule(name: str) -> bool:
    """pylatexenc knows what to print for ``\\name``."""
    return latex_context().get_macro_spec(name) is not None


_BARE_SPECIAL = re.compile(r"(?<!\\)([%&#])")


@lru_cache(maxsize=65536)
def pylatexenc_text(fragment: str) -> str:
    """pylatexenc on one small fragment, by a converter of its own (pylatexenc's converter keeps state:
    a ``\\title`` it saw is printed by a later ``\\maketitle``). Fragments repeat ("\\alpha", "\\'e"), so
    cached. pylatexenc raises on some valid input (``\\sqrt[3]{x}`` in text): such a fragment prints
    its arguments' text."""
    fragment = _BARE_SPECIAL.sub(r"\\\1", fragment)
    try:
        return LatexNodes2Text(
            latex_context=latex_context(), math_mode="text", strict_latex_spaces=False
        ).latex_to_text(fragment)
    except Exception:
        return flatten(fragment)


_FLATTEN = re.compile(r"\\[A-Za-z]+\*?\s*|\\(?=[^A-Za-z])|[{}]")


def flatten(text: str) -> str:
    """Macro names, backslashes and braces removed: what nesting deeper than ``MAX_DEPTH`` becomes."""
    return _FLATTEN.sub("", text)
