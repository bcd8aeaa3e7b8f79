"""Script-aware shingles: word n-grams for space-delimited text, character n-grams for CJK.

Whitespace shingles fail on Chinese and Japanese (a whole sentence is one "word"), so the text is
segmented by script: runs of Han/kana/Hangul become character n-grams, everything else word
n-grams. Shingles are built from the same normalisation as the exact key (NFKC, case-folded,
punctuation dropped), so near-duplicate detection never sees case, width or punctuation noise.
"""

from __future__ import annotations

import re
import unicodedata

from corpus_hygiene.language.scripts import CJK_CHARS
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
    norm = unicodedata.normalize("NFKC", text).casefold()
    out: set[str] = set()
    words: list[str] = []
    pos = 0
    word = _WORD(norm).findall
    for run in _CJK_RUN.finditer(norm):
        words.extend(word(norm[pos : run.start()].replace("_", " ")))
        chars = run.group(0)
        out.update(chars[i : i + char_n] for i in range(max(1, len(chars) - char_n + 1)))
        pos = run.end()
    words.extend(word(norm[pos:].replace("_", " ")))
    if words:
        out.update(" ".join(words[i : i + word_n]) for i in range(max(1, len(words) - word_n + 1)))
    return frozenset(out)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)
