"""Verified similarity of two texts (the decision) and the shingles LSH hashes (the proposal)."""

from __future__ import annotations

import difflib
import re
import unicodedata
from functools import lru_cache

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.shingles import jaccard, shingles
from corpus_hygiene.language.scripts import CJK_CHARS
from corpus_hygiene.wordlists import top_words

CJK_CHAR = re.compile(f"[{CJK_CHARS}]")
ALNUM = re.compile(r"[^\W_]")
_TOKEN = re.compile(f"[{CJK_CHARS}]|[^\\W_]+")


def tokens(text: str) -> tuple[str, ...]:
    """Word tokens, with each CJK character a token of its own (NFKC, case-folded)."""
    return tuple(_TOKEN.findall(unicodedata.normalize("NFKC", text).casefold()))


@lru_cache(maxsize=4096)
def verify_shingles(text: str, word_n: int, char_n: int) -> frozenset[str]:
    """A canonical is verified against many candidates: its shingle set is built once, not per pair."""
    return shingles(text, word_n, char_n)


def verified_similarity(a: str, b: str, config: DedupConfig) -> float:
    """The verification-shingle Jaccard, or the token alignment ratio when that is larger.

    >>> round(verified_similarity("we train a small model on new data", "we train a tiny model on new data",
    ...                           DedupConfig()), 3)
    0.875
    """
    ja = jaccard(
        verify_shingles(a, config.verify_word_ngram, config.verify_char_ngram),
        verify_shingles(b, config.verify_word_ngram, config.verify_char_ngram),
    )
    if ja < config.alignment_floor or not config.alignment:
        return ja  # too far apart for an alignment (costly, per pair) to matter
    matcher = difflib.SequenceMatcher(None, tokens(a), tokens(b), autojunk=False)
    if matcher.real_quick_ratio() <= ja or matcher.quick_ratio() <= ja:
        return ja  # upper bounds of the ratio: the alignment cannot beat the Jaccard
    return max(ja, matcher.ratio())


@lru_cache(maxsize=4)
def common_words(n: int) -> frozenset[str]:
    """The ``n`` most frequent words of each language we shingle (wordfreq's small lists), normalised
    like shingles. Unrelated abstracts share mostly these, and every word they share makes LSH propose
    the pair; without them the candidate pairs of unrelated abstracts fall ~N× (benchmarks/bench_dedup)."""
    words: set[str] = set()
    for lang in LSH_LANGUAGES:
        words.update(unicodedata.normalize("NFKC", w).casefold() for w in top_words(lang, n, "small"))
    return frozenset(words)


LSH_LANGUAGES = ("en", "fr", "es", "pt", "de", "zh", "ja", "ko", "it", "nl", "ru")


def lsh_shingles(text: str, config: DedupConfig) -> frozenset[str]:
    """The shingles MinHash signs: script-aware n-grams, less the most common words (when set)."""
    found = shingles(text, config.lsh_word_ngram, config.lsh_char_ngram)
    if not config.lsh_skip_common:
        return found
    return (found - common_words(config.lsh_skip_common)) or found
