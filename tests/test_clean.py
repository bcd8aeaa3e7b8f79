"""Cleaning: golden cases (tests/cases/*.json), properties, and the real seed files."""

import json
import re
import unicodedata

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from corpus_hygiene.clean import clean_text
from corpus_hygiene.clean.encoding import may_need_encoding_repair
from corpus_hygiene.clean.latex.markup import KEEP_ARGUMENT
from corpus_hygiene.clean.latex.spans import find_math_spans

from .conftest import ROOT, SEEDS, needs_seeds

CASES_DIR = ROOT / "tests" / "cases"


def _cases(name):
    return [
        pytest.param(c, id=f"{name}:{c['label']}")
        for c in json.loads((CASES_DIR / f"{name}.json").read_text())
    ]


ALL = [
    p
    for name in ("latex", "latex_words", "dollars", "markdown", "pdf", "encoding", "must_not_change")
    for p in _cases(name)
]


@pytest.mark.parametrize("case", ALL)
def test_golden_case(case):
    assert clean_text(case["input"], case.get("lang", "en")).text == case["expected"]


@pytest.mark.parametrize("case", _cases("must_not_change"))
def test_clean_text_records_no_fix(case):
    assert clean_text(case["input"], case.get("lang", "en")).fixes == ()


def test_fixes_are_recorded_in_order():
    cleaned = clean_text("We intro- duce \\textbf{CBT}â€™s **new**  model")
    assert cleaned.text == "We introduce CBT’s new model"
    assert cleaned.fixes == ("mojibake", "latex", "markdown", "dehyphenation", "whitespace")


def test_math_span_rule():
    text = r"priced at $10 per hour, with $\alpha$-entmax and $5-$10 fees, $x$"
    assert [c for _, _, c in find_math_spans(text)] == [r"\alpha", "x"]


@given(st.text(max_size=400))
def test_cleaning_never_raises_and_is_idempotent(text):
    once = clean_text(text).text
    assert clean_text(once).text == once


latexy = st.lists(
    st.sampled_from([*"ab $\\^_{}%&~*`'-\nαx12", "\\textbf{", "\\alpha", "$x$", "\\frac", "``", "**"]),
    max_size=30,
).map("".join)


@given(latexy)
def test_latex_like_input_never_raises_and_is_idempotent(text):
    once = clean_text(text).text
    assert clean_text(once).text == once


# text a cleaner meets: words, spaces of every kind, single letters, hyphens, markup and invisible characters
prose = st.lists(
    st.sampled_from(
        [
            *"ab αé-'~*_$`\\\n\t\xa0\u3000\u00ad\u200b\u200c\u200dمی",
            "word",
            "Word",
            "intro- duce",
            "A B S",
            "--",
            "''",
            "â€™",
            "ﬁ",
            "e\u0301",
            "&amp;",
            "  ",
        ]
    ),
    max_size=25,
).map("".join)


@given(st.one_of(prose, st.text(max_size=60)), st.sampled_from(["en", "de", "zh"]))
def test_the_short_path_after_encoding_repair_gives_what_the_full_cleaning_gives(text, lang):
    """The per-file stage repairs the encoding first; cleaning then skips every step when none applies
    (``_settled``): the text and fixes are those of cleaning the raw text in full."""
    from corpus_hygiene.clean.encoding import repair_encoding

    repaired, repairs = repair_encoding(text)
    assert clean_text(repaired, lang, repairs=repairs) == clean_text(text, lang)


plain = st.text(
    alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Lo", "Nd", "Zs"), max_codepoint=0x9FFF),
    max_size=200,
).filter(lambda t: not may_need_encoding_repair(t))  # "Â\xa0" *is* mojibake (of a no-break space)


@given(plain)
def test_text_without_markup_changes_only_in_whitespace(text):
    assert clean_text(text).text == unicodedata.normalize("NFC", re.sub(r"\s+", " ", text).strip())


@needs_seeds
def test_seed_records_have_no_markup_or_mojibake_left(policy):
    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline.process import process_file

    records = [
        r for f in discover(SEEDS, policy.max_file_bytes).files for r in process_file(f, policy).records
    ]
    assert len(records) == 76
    for rec in records:
        assert not re.search(r"\\[A-Za-z]+", rec.text), rec.text
        assert "$" not in rec.text and "**" not in rec.text, rec.text
        assert "â€" not in rec.text and "Ã" not in rec.text, rec.text
    text = "\n".join(r.text for r in records)
    for expected in [
        "CareBench-CBT",
        "δ-GBS",
        "1.5B",
        "360°×180°",
        "DA²",
        "Õ(1/ε⁷)",
        "Θ(σ⁻²)",
        "σ → 0",
        "“optimal”",
        "Schrödinger",
        "introduce Nemotron",
        "state-space",
        "first- and second-order",
        "LaTeX representation",
        "Masked Element-wise Learnable Diffusion (MELD)",
    ]:
        assert expected in text, expected
    assert "<http" not in text


# ---- text macros, dropped macros, the loss guard ------------------------------------------------
def test_every_dropped_macro_goes_with_its_arguments():
    from corpus_hygiene.clean.latex import text_mode
    from corpus_hygiene.clean.latex.arguments import argspec
    from corpus_hygiene.clean.latex.markup import DROPPED

    assert "citations_dropped" in text_mode.__doc__
    for name in sorted(DROPPED - {"def", "let"}):
        if argspec(name).count("{") != 1:  # definitions: below, with their real arguments
            continue
        assert clean_text(f"a \\{name}{{key:{name}}} b").text == "a b", name
    assert clean_text(r"\def\x#1{\x{#1}} a \let\y=\x b \newcommand{\z}[1][d]{Z #1} c").text == "a b c"
    starred = r"see~\cite[p.~3]{k}, \cref*{s} and \vspace*{2em}\includegraphics[width=3cm]{f.png}it"
    assert clean_text(starred).text == "see, and it"


@pytest.mark.parametrize("name", sorted(KEEP_ARGUMENT))
def test_every_text_macro_keeps_its_argument_in_text_and_in_math(name):
    from corpus_hygiene.clean.latex.markup import LAST_ARGUMENT

    first = "{1pt}" if name in LAST_ARGUMENT else ""  # a colour, a width, a link's target
    assert clean_text(f"we ship \\{name}{first}{{Graph-Mind v2}} now").text == "we ship Graph-Mind v2 now"
    assert "KL" in clean_text(f"the ${{\\{name}{first}{{KL}}}}$ term").text


words = st.from_regex(r"[A-Za-zÀ-ÿ]{2,12}", fullmatch=True)
TEXT_MACROS = sorted(
    {
        "texttt",
        "textsf",
        "textsc",
        "textrm",
        "textup",
        "textmd",
        "textbf",
        "textit",
        "emph",
        "mbox",
        "underline",
    }
)


@given(st.lists(st.tuples(words, st.sampled_from([None, *TEXT_MACROS])), min_size=1, max_size=12))
def test_cleaning_never_drops_a_word_wrapped_in_text_macros(pieces):
    # letter soup ftfy reads as mojibake ("ßØ" is NKo in UTF-8 read as Latin-1) is another test's subject
    assume(not may_need_encoding_repair(" ".join(w for w, _ in pieces)))
    text = " ".join(w if m is None else f"\\{m}{{{w}}}" for w, m in pieces)
    cleaned = clean_text(text)
    assert cleaned.lost == ()
    assert cleaned.text.split() == [w for w, _ in pieces]


def test_the_loss_guard_flags_words_a_step_removed(monkeypatch):
    from corpus_hygiene import clean

    monkeypatch.setattr(clean, "latex_to_unicode", lambda t: t.replace(r"\texttt{EXGRPO}", ""))
    cleaned = clean.clean_text(r"Explanatory GRPO (\texttt{EXGRPO}) uses \cite{k} a policy")
    assert cleaned.lost == ("EXGRPO",)
    assert cleaned.fixes[-1] == "dropped_text"


# ---- one rule for math and literal dollars ---------------------------------------------------------
@pytest.mark.parametrize("case", _cases("dollars"))
def test_literal_dollars_are_never_quarantined(case, policy):
    from checks.routing import candidate_frame, route

    from .conftest import signal_columns

    text = clean_text(
        case["input"] + " We measured this across nine months of real traffic on two clusters."
    ).text
    row = {"text": text, "lang": "en", "year": 2026, "venue": "ICLR", "header_label": "Papers"}
    row = {**row, "n_chars": len(text), **signal_columns(text), "pii": {"email": 0, "phone": 0}}
    assert route(candidate_frame([row]), policy) == []


money = st.builds(
    lambda a, b, w: f"{a} ${b} {w}",
    st.sampled_from(["costs", "from", "saves", "US", "and", "for"]),
    st.integers(0, 10**6),
    st.sampled_from(["per hour", "to", "and", "million", "of every", "for $n$ queries", "", "$"]),
)


@given(st.lists(st.one_of(money, latexy, words), max_size=8).map(" ".join))
def test_the_residue_check_accepts_every_output_without_a_math_span_or_a_command(text):
    import pandas as pd

    from checks.domain import has_latex_residue

    out = clean_text(text).text
    flagged = bool(has_latex_residue(pd.Series([out], dtype="str"))[0])
    assert flagged == bool(find_math_spans(out) or re.search(r"\\[A-Za-z]+|\\[%&${}]", out))


@given(prose)
def test_no_cleaned_text_fails_the_invisible_characters_check(text):
    """The cleaner and the record check agree on which zero-width (non-)joiners are spelling."""
    import pandas as pd

    from checks.domain import INVISIBLE

    assert not pd.Series([clean_text(text).text], dtype="str").str.contains(INVISIBLE, regex=True)[0]


def test_joiners_of_persian_and_indic_spelling_are_kept_and_stray_ones_removed():
    persian = "از آنجا که شناسائی حیثیت ذاتی اعضای خانواده بشری می‌خواهد که حقوق یکسان باشد"
    bengali = "প্রত্যেকের‌ই সে সমাজের প্রতি পালনীয় কর্তব্য রয়েছে"
    for text in (persian, bengali, "family 👩‍🔬 emoji"):
        assert clean_text(text).text == text and "invisible_chars" not in clean_text(text).fixes
    cleaned = clean_text("a stray\u200c joiner \u200dhere")
    assert cleaned.text == "a stray joiner here" and "invisible_chars" in cleaned.fixes


def test_bidi_controls_are_removed_and_recorded():
    """Trojan-Source text: bidi overrides and isolates reorder what a reader sees; stored text has none."""
    cleaned = clean_text("access \u202e\u2066 level check \u2069\u2066 granted for admins only")
    assert cleaned.text == "access level check granted for admins only"
    assert "invisible_chars" in cleaned.fixes
