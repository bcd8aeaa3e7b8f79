"""The words of an ASCII text, split once a record: the dedup key, the shingles and the signals read the
same lower-cased runs of letters and digits there (their property tests hold each to its general pattern),
and the per-file stage asks for all three of one text in a row, so the last few texts' words are kept."""

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
