"""Encoding repair against ftfy itself: every mojibake family ftfy repairs is repaired (the cheap test of
``may_need_encoding_repair`` never skips what ftfy would fix), and clean text is never "repaired"."""

import ftfy
import ftfy.bad_codecs  # noqa: F401 - registers ftfy's sloppy-windows-125x codecs
import pytest

from corpus_hygiene.clean.encoding import _CONFIG, repair_encoding

from .conftest import SHARED

UDHR = SHARED / "lid" / "udhr"
needs_udhr = pytest.mark.skipif(not UDHR.is_dir(), reason="../shared/lid/udhr is not present")
# How UTF-8 is misread: the single-byte encodings ftfy repairs from (undefined bytes kept as C1 controls).
MISREADINGS = (
    "latin-1",
    "sloppy-windows-1252",
    "sloppy-windows-1250",
    "iso-8859-2",
    "sloppy-windows-1251",
    "sloppy-windows-1253",
    "sloppy-windows-1254",
    "sloppy-windows-1257",
    "macroman",
    "cp437",
)


def _udhr_lines(step: int) -> list[str]:
    lines = [line for path in sorted(UDHR.glob("*.txt")) for line in path.read_text("utf-8").splitlines()]
    return [line for line in lines if line.strip()][::step]


@needs_udhr
@pytest.mark.parametrize("encoding", MISREADINGS)
def test_repair_is_ftfys_on_every_misreading_of_every_language(encoding):
    changed = 0
    for line in _udhr_lines(9):
        once = line.encode("utf-8").decode(encoding)
        if once == line:
            continue
        for bad in (once, once.encode("utf-8").decode(encoding), f"See {once[:24]} here"):
            expected = ftfy.fix_and_explain(bad, config=_CONFIG).text
            assert repair_encoding(bad)[0] == expected, (encoding, bad)
            changed += expected != bad
    assert changed > 100  # the sweep did reach texts ftfy repairs


@needs_udhr
def test_clean_text_of_every_language_is_never_repaired():
    from benchmarks.corpora import load_pools

    for line in _udhr_lines(1):
        assert repair_encoding(line) == (line, ()), line
    repaired = 0
    for texts in load_pools().values():
        for text in texts[::3]:
            # a few real abstracts hold mojibake, ligatures or C1 controls: repaired as ftfy repairs them
            assert repair_encoding(text)[0] == ftfy.fix_and_explain(text, config=_CONFIG).text, text
            repaired += repair_encoding(text)[0] != text
    assert repaired < 30
