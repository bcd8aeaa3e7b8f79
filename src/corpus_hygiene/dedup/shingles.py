"""Script-aware shingles: word n-grams for space-delimited text, character n-grams for CJK.

Whitespace shingles fail on Chinese and Japanese (a whole sentence is one "word"), so the text is
segmented by script: runs of Han/kana/Hangul become character n-grams, everything else word
n-grams. Shingles are built from the same normalisation as the exact key (NFKC, case-folded,
punctuation dropped), so near-duplicate detection never sees case, width or punctuation noise.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from corpus_hygiene.language.scripts import CJK_CHARS
from corpus_hygiene.tokens import ascii_words
from corpus_hygiene.unicode_marks import MarksPattern

_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
# letters, digits and combining marks (Indic words), in a text whose "_" became " " (``\w`` has it)
_WORD = MarksPattern(r"[\w{marks}]+")


def shingles(text: str, word_n: int = 2, char_n: int = 2) -> frozenset[str]:
    """The shingle set of a cleaned text.

    >>> sorted(shingles("Deep Nets, deep nets!"))
    ['deep nets', 'nets deep']
    >>> sorted(shingles("我们提出方法"))
    ['们提', '出方', '我们', '提出', '方法']
    """
    if text.isascii():
        words = ascii_words(text)
        return frozenset(_ngrams(words, word_n, " ")) if words else frozenset()
    norm = unicodedata.normalize("NFKC", text).casefold()
    out: set[str] = set()
    words: list[str] = []
    pos = 0
    word = _WORD(norm).findall
    for run in _CJK_RUN.finditer(norm):
        words.extend(word(norm[pos : run.start()].replace("_", " ")))
        out.update(_ngrams(run.group(0), char_n, ""))
        pos = run.end()
    words.extend(word(norm[pos:].replace("_", " ")))
    if words:
        out.update(_ngrams(words, word_n, " "))
    return frozenset(out)


def _ngrams(items: Sequence[str], n: int, sep: str) -> Iterable[str]:
    """The ``n``-grams of ``items`` joined by ``sep``; all of them as one when there are no more than n."""
    if n == 1:
        return items
    if len(items) <= n:
        return (sep.join(items),)
    return map(sep.join, zip(*(items[k:] for k in range(n)), strict=False))  # stops at the shortest


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)
