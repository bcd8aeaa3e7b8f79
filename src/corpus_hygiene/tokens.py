"""The words of an ASCII text, split once a record.

The dedup key, the shingles and the quality signals each read a text's words; on ASCII text their
patterns agree (lower-cased runs of letters and digits: the property tests of tests/test_dedup.py and
tests/test_signals.py hold each to its general pattern), so the per-file stage, which asks for all three
of one text in a row, splits it once: the last few texts' words are kept.
"""

from __future__ import annotations

import re
from functools import lru_cache

_ASCII_WORD = re.compile("[a-z0-9]+")


@lru_cache(maxsize=8)
def ascii_words(text: str) -> tuple[str, ...]:
    """The lower-cased words of an ASCII ``text``.

    >>> ascii_words("We use BERT-base_v2.")
    ('we', 'use', 'bert', 'base', 'v2')
    """
    return tuple(_ASCII_WORD.findall(text.lower()))
