"""Containment of short reference texts (benchmark items, questions) in a run's records.

An item's word n-grams (``tokens``: NFKC, case-folded, each Chinese/Japanese/Korean character a word)
are hashed; a record contains the item to the share of those n-grams it has too. An item shorter than
the n-gram length is one n-gram of all its words; one shorter than ``min_words`` is not checked (a
phrase of a few words is in many texts by chance). Records are measured many at a time with numpy:
Python runs only to hash each token (xxhash: the same numbers in every process and run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from corpus_hygiene.dedup.similarity import tokens

_MULT = np.uint64(0x9E3779B97F4A7C15)


def token_hashes(text: str) -> np.ndarray:
    """One uint64 a word of ``text`` (``tokens``)."""
    return np.fromiter((xxhash.xxh3_64_intdigest(t.encode()) for t in tokens(text)), np.uint64)


@dataclass(frozen=True, slots=True)
class Contamination:
    """The ``[reference]`` policy values of the containment measure."""

    ngram: int = 8
    min_words: int = 6
    max_words: int = 64  # longer reference texts are deduplicated against, not searched for
    threshold: float = 0.8

    def span(self, n_tokens: int) -> int:
        """The n-gram length an item of ``n_tokens`` words is indexed by; 0: not an item."""
        return 0 if not self.min_words <= n_tokens <= self.max_words else min(self.ngram, n_tokens)


def ngrams(hashes: np.ndarray, owner: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``span``-word n-grams of several texts' token hashes laid end to end (``owner``: each token's
    text, ascending), as (hash, owner) pairs, no n-gram across two texts and each pair once."""
    m = len(hashes) - span + 1
    if m <= 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    h = np.zeros(m, np.uint64)
    for k in range(span):
        h = h * _MULT + hashes[k : k + m]
    inside = owner[:m] == owner[span - 1 :]
    h, who = h[inside], owner[:m][inside]
    order = np.lexsort((h, who))
    h, who = h[order], who[order]
    first = np.r_[True, (h[1:] != h[:-1]) | (who[1:] != who[:-1])]
    return h[first], who[first]


def _laid_end_to_end(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    parts = [token_hashes(t) for t in texts]
    owner = np.repeat(np.arange(len(parts)), [len(p) for p in parts])
    return (np.concatenate(parts) if parts else np.zeros(0, np.uint64)), owner


@dataclass(frozen=True, slots=True)
class ItemIndex:
    """The items' n-grams: per span, the sorted (hash, item) pairs; and each item's count of n-grams."""

    span: np.ndarray  # int32, a row a pair
    hash: np.ndarray  # uint64
    item: np.ndarray  # int64: the item's row in its reference
    counts: np.ndarray  # int32 by item row: its distinct n-grams (0: not checked)

    def __len__(self) -> int:
        return int(np.count_nonzero(self.counts))


def index_items(texts: Sequence[str], rows: np.ndarray, n_rows: int, params: Contamination) -> ItemIndex:
    """The n-grams of the texts that are items (``Contamination.span``) among ``texts`` (rows ``rows`` of
    a reference of ``n_rows``)."""
    hashes, owner = _laid_end_to_end(texts)
    lengths = np.bincount(owner, minlength=len(texts))
    spans = np.array([params.span(int(n)) for n in lengths], np.int32)
    parts = []
    for span in np.unique(spans[spans > 0]).tolist():
        h, who = ngrams(hashes, owner, span)
        keep = spans[who] == span
        parts.append((np.full(int(keep.sum()), span, np.int32), h[keep], rows[who[keep]]))
    span, h, item = (np.concatenate(c) for c in zip(*parts, strict=True)) if parts else (
        np.zeros(0, np.int32), np.zeros(0, np.uint64), np.zeros(0, np.int64))  # fmt: skip
    order = np.lexsort((item, h, span))
    counts = np.bincount(item, minlength=n_rows).astype(np.int32)
    return ItemIndex(span[order], h[order], item[order].astype(np.int64), counts)


def contained(texts: Sequence[str], index: ItemIndex) -> tuple[np.ndarray, np.ndarray]:
    """For each text, the item it contains the largest share of (-1: none) and that share; on equal
    shares the lower item row."""
    best, share = np.full(len(texts), -1, np.int64), np.zeros(len(texts))
    if not len(index) or not len(texts):
        return best, share
    hashes, owner = _laid_end_to_end(texts)
    found_owner, found_item = [], []
    for span in np.unique(index.span).tolist():
        lo, hi = np.searchsorted(index.span, [span, span + 1])
        keys, items = index.hash[lo:hi], index.item[lo:hi]
        h, who = ngrams(hashes, owner, span)
        first = np.searchsorted(keys, h, "left")
        count = np.searchsorted(keys, h, "right") - first
        hit = np.flatnonzero(count)
        sizes = count[hit]
        starts = np.repeat(first[hit] - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))
        found_owner.append(np.repeat(who[hit], sizes))
        found_item.append(items[starts])
    who, item = np.concatenate(found_owner), np.concatenate(found_item)
    if not len(who):
        return best, share
    pairs, n = np.unique(np.stack([who, item], 1), axis=0, return_counts=True)
    shares = n / index.counts[pairs[:, 1]]
    order = np.lexsort((pairs[:, 1], -shares, pairs[:, 0]))  # per text: largest share, then lowest item
    pairs, shares = pairs[order], shares[order]
    first = np.r_[True, pairs[1:, 0] != pairs[:-1, 0]]
    best[pairs[first, 0]], share[pairs[first, 0]] = pairs[first, 1], shares[first]
    return best, share
