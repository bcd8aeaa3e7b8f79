"""The cleaner against plain pylatexenc 2.11 on LaTeX snippets written for this test
(tests/cases/latex_differential.json): every output is the one a reader of the typeset text reads, and
every difference from pylatexenc belongs to a deliberate class of text_mode.py's docstring table."""

import json
import re
import unicodedata

import pytest
from pylatexenc.latex2text import LatexNodes2Text

from corpus_hygiene.clean import clean_text
from corpus_hygiene.clean.latex import text_mode as latex_module

from .conftest import ROOT

CASES = json.loads((ROOT / "tests" / "cases" / "latex_differential.json").read_text("utf-8"))
# the classes of deliberate difference: the table of docs/text.md, named in text_mode.py's docstring too
CLASSES = set(re.findall(r"^\| `([a-z_]+)` \|", (ROOT / "docs" / "text.md").read_text("utf-8"), re.M))


def plain_pylatexenc(text: str) -> str:
    """pylatexenc with its defaults, a fresh converter per text, spaces collapsed (the cleaner's last
    steps do the same to ours: whitespace, NFC, soft hyphens)."""
    try:
        out = LatexNodes2Text().latex_to_text(text)
    except Exception as exc:  # pylatexenc fails on some valid input (\href): recorded as such
        return f"<error: {type(exc).__name__}>"
    return unicodedata.normalize("NFC", re.sub(r"\s+", " ", out.replace("\xad", "")).strip())


@pytest.mark.parametrize("case", CASES, ids=[c["label"] for c in CASES])
def test_output_and_its_difference_from_pylatexenc(case):
    assert clean_text(case["input"]).text == case["expected"]
    theirs = plain_pylatexenc(case["input"])
    if case["class"] == "same":
        assert theirs == case["expected"]
    else:
        assert case["class"] in CLASSES
        assert theirs == case["pylatexenc"] != case["expected"]


def test_the_snippets_cover_every_class_and_enough_constructs():
    assert len(CASES) >= 300
    assert {c["class"] for c in CASES} == CLASSES | {"same"}
    assert len(CLASSES) == 10 and all(f"``{name}``" in latex_module.__doc__ for name in CLASSES)


def test_records_are_converted_independently():
    first = clean_text(r"\title{Hidden Title} We study graphs.").text
    later = clean_text(r"\maketitle We study trees.").text
    assert first == "Hidden Title We study graphs." and later == "We study trees."
