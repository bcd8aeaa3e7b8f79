"""Exact-duplicate keys and stable record ids.

The key is computed from the cleaned text and never stored as text: NFKC (ligatures, full-width
forms, superscripts → plain), case-folded, and with everything that is not a letter, a digit or a
combining mark removed (punctuation, whitespace; the vowel signs of Indic scripts are letters' parts).
Two copies that differ only in those respects get the same key, and so the same ``record_id``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

import numpy as np
import pyarrow as pa

from corpus_hygiene.tokens import ascii_words
from corpus_hygiene.unicode_marks import MarksPattern

_NOT_ALNUM = MarksPattern(r"[^\w{marks}]+|_+")
_NOT_ALNUM_NO_MARKS = re.compile(r"[\W_]+")  # the same where the text has no combining mark: one class
_MARK = MarksPattern("[{marks}]")


def dedup_key(text: str) -> str:
    """The exact-duplicate key of a cleaned text.

    >>> dedup_key("The ﬁrst  Model") == dedup_key("the first model.")
    True
    >>> dedup_key("कम") == dedup_key("काम")  # "less", "work": a vowel sign apart
    False
    """
    if text.isascii():
        return "".join(ascii_words(text))
    norm = unicodedata.normalize("NFKC", text).casefold()
    if norm.isascii() or _MARK(norm).search(norm) is None:
        return _NOT_ALNUM_NO_MARKS.sub("", norm)
    return _NOT_ALNUM(norm).sub("", norm)


def record_id(key: str) -> str:
    """A stable 128-bit id (hex) of the dedup key: the same text gives the same id in every run."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=16).hexdigest()


ID_BYTES = 16
_HEX = np.frombuffer(b"0123456789abcdef", np.uint8)
_NIBBLE = np.full(256, 255, np.uint8)  # a hex digit's value; 255 for any other byte
_NIBBLE[_HEX] = np.arange(16, dtype=np.uint8)


def id_bytes(ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Record ids (32 lower-case hex digits, ``record_id``) as the 16 bytes they spell: one uint8 row an id,
    16 bytes where Arrow holds 36. Anything else raises ``ValueError``."""
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    if ids.null_count:
        raise ValueError("a record_id is null")
    try:
        fixed = ids.cast(pa.binary(2 * ID_BYTES))  # one buffer of digits, no offsets
    except pa.ArrowInvalid as exc:
        raise ValueError("a record_id is not 32 characters long") from exc
    digits = np.frombuffer(fixed.buffers()[1], np.uint8, 2 * ID_BYTES * len(ids), 2 * ID_BYTES * fixed.offset)
    nibbles = _NIBBLE[digits].reshape(-1, 2 * ID_BYTES)
    if (nibbles == 255).any():
        raise ValueError("a record_id is not lower-case hex")
    return nibbles[:, 0::2] << 4 | nibbles[:, 1::2]
