"""Unicode and whitespace normalisation of stored text: NFC, no invisible characters, single spaces.

Deliberately not NFKC, not case folding and not quote uncurling: those would change what the author
wrote (superscripts, full-width CJK punctuation, curly quotes). They belong in dedup keys only.
"""

from __future__ import annotations

import re
import unicodedata

from corpus_hygiene.language.scripts import char_class

# C0/C1 controls (tab and line breaks are whitespace, handled below), zero-width and bidi formatting
# characters, the BOM and word joiner. The soft hyphen is the PDF stage's business.
_INVISIBLE = re.compile(
    r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)
# The zero-width (non-)joiner after a non-ASCII letter is spelling (Persian می‌خواهم, Indic conjuncts,
# emoji sequences): kept; at the start, after a space or after ASCII it is debris.
_STRAY_JOINERS = re.compile(r"(?:^|[\s\x00-\x7f])[\u200c\u200d]+")
_SPACE_RUN = re.compile(r"\s+")
_CJK = char_class("kana", "han") + "\u3000-\u303f\uff00-\uffef"  # and CJK punctuation, full-width forms
# A line break between two CJK characters is a hard wrap, not a word space: Chinese and Japanese
# put no spaces between words, so joining with a space would insert one the author never wrote.
_CJK_WRAP = re.compile(f"(?<=[{_CJK}])[ \\t]*(?:\\r\\n|\\r|\\n)[ \\t]*(?=[{_CJK}])")


def remove_invisible_chars(text: str) -> str:
    """Remove control, zero-width and bidi formatting characters.

    >>> remove_invisible_chars("zero\\u200bwidth"), remove_invisible_chars("zero\\u200cwidth")
    ('zerowidth', 'zerowidth')
    >>> persian = "\\u0645\\u06cc\\u200c\\u062e\\u0648\\u0627\\u0647\\u0645"  # می‌خواهم
    >>> remove_invisible_chars(persian) == persian
    True
    >>> remove_invisible_chars("access \\u202e\\u2066level\\u2069\\u202c granted")  # Trojan Source
    'access level granted'
    """
    return _STRAY_JOINERS.sub(lambda m: m.group().rstrip("\u200c\u200d"), _INVISIBLE.sub("", text))


def collapse_whitespace(text: str) -> str:
    """Every whitespace run (NBSP, line breaks, U+2028, ideographic space …) → one space, trimmed;
    a line break between CJK characters is removed.

    >>> collapse_whitespace("  two\\u00a0 words\\r\\nand a line ")
    'two words and a line'
    >>> collapse_whitespace("修改\\n记录")
    '修改记录'
    """
    return _SPACE_RUN.sub(" ", _CJK_WRAP.sub("", text)).strip()


def to_nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)
