"""Unicode and whitespace normalisation of stored text: NFC, no invisible characters, single spaces.

Deliberately not NFKC, not case folding and not quote uncurling: those would change what the author
wrote (superscripts, full-width CJK punctuation, curly quotes). They belong in dedup keys only.
"""

from __future__ import annotations

import re
import unicodedata

# C0/C1 controls (tab and line breaks are whitespace and handled below), zero-width and bidi
# formatting characters, the BOM/word joiner, soft hyphen is handled by the PDF stage.
_INVISIBLE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_SPACE_RUN = re.compile(r"\s+")


def remove_invisible_chars(text: str) -> str:
    """>>> remove_invisible_chars("zero\\u200bwidth")
    'zerowidth'
    """
    return _INVISIBLE.sub("", text)


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace (NBSP, line breaks, U+2028, ideographic space …) → one space, trimmed.

    >>> collapse_whitespace("  two\\u00a0 words\\r\\nand a line ")
    'two words and a line'
    """
    return _SPACE_RUN.sub(" ", text).strip()


def to_nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)
