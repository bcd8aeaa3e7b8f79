"""Cleaning: golden cases (tests/cases/*.json), properties, and the real seed files."""

import json
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpus_hygiene.clean import clean_text
from corpus_hygiene.clean.encoding import may_need_encoding_repair
from corpus_hygiene.clean.latex import find_math_spans

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
