"""Combining marks as a regular-expression class: Python's ``\\w`` leaves them out, so a word of an
Indic script ("हिन्दी": consonants joined by vowel signs and viramas) would split at every mark."""

from __future__ import annotations

import re
import unicodedata


def _mark_ranges(last: int = 0x1FFFF) -> str:
    """Every combining mark (Mn, Mc, Me) up to ``last``, as ranges for a ``[...]`` class."""
    ranges: list[list[int]] = []
    for code in range(0x300, last + 1):
        if unicodedata.category(chr(code))[0] == "M":
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in ranges)


MARKS = _mark_ranges()
BMP_MARKS = _mark_ranges(0xFFFF)


class MarksPattern:
    """A regular expression whose ``{marks}`` is the class of combining marks, compiled twice: sre makes
    a bitmap of a class within U+FFFF, but scans a class reaching past it range by range (4x slower on
    abstracts). Calling it with the text gives the pattern to use: the bitmap one unless the text holds a
    character past U+FFFF; both match alike on such text."""

    def __init__(self, template: str) -> None:
        self.bmp = re.compile(template.replace("{marks}", BMP_MARKS))
        self.full = re.compile(template.replace("{marks}", MARKS))

    def __call__(self, text: str) -> re.Pattern:
        return self.bmp if text.isascii() or _ASTRAL.search(text) is None else self.full


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # past U+FFFF: one class scan in C, no Python-level pass
