"""Exact-duplicate keys and stable record ids.

The key is computed from the cleaned text and never stored as text: NFKC (ligatures, full-width
forms, superscripts → plain), case-folded, and with everything that is not a letter or a digit
removed (punctuation, whitespace, combining marks left over after NFKC). Two copies that differ only
in those respects get the same key, and so the same ``record_id``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_NOT_ALNUM = re.compile(r"[\W_]+")


def dedup_key(text: str) -> str:
    """The exact-duplicate key of a cleaned text.

    >>> dedup_key("The ﬁrst  Model") == dedup_key("the first model.")
    True
    """
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKC", text).casefold())


def record_id(key: str) -> str:
    """A stable 128-bit id (hex) of the dedup key: the same text gives the same id in every run."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=16).hexdigest()
