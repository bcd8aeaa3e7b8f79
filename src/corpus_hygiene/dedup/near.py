"""Near duplicates: MinHash LSH proposes candidates, a verified similarity decides, and clusters are
stars around a canonical record, so nothing is merged by a chain of resemblances.

Verified similarity of two texts = the larger of the exact Jaccard of their verification shingle sets
(word or character bigrams), which forgives reordered sentences, and their token alignment ratio
(``difflib.SequenceMatcher`` on word tokens, or on characters for Chinese/Japanese), which forgives
scattered word edits that break many shingles at once. It is a property of the pair: the threshold
decides what it merges, never what it is (``pairs.parquet``'s what-if holds at every threshold).
A pair that shares only its opening sentences scores low on both (≤ 0.66 on the dev set, where true
near duplicates with up to 25% edits score ≥ 0.82), which is what a shingle threshold alone cannot do.

Records are visited best first (``exact.canonical_rank``). Each is compared with the canonical records
already chosen that LSH proposes; if the best verified similarity reaches the threshold it becomes a
duplicate of that canonical, otherwise a canonical itself. So every duplicate is verified against the
very record it is merged into: with A~B, B~C and A≁C, C is never pulled into A's cluster through B.
Only canonicals enter the LSH index. On a cluster, the candidates and their similarities come from
``dedup/cluster_search.py`` (a ``PairSearch``); the star pass (``star_pass``) is this module's either way.
"""

from __future__ import annotations

import difflib
import os
import re
import unicodedata
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.exact import lookup
from corpus_hygiene.dedup.shingles import jaccard, shingles
from corpus_hygiene.incremental.pair_memo import TEXT_KEY_BYTES, PairMemo, index_keys, text_key
from corpus_hygiene.language.scripts import CJK_CHARS
from corpus_hygiene.wordlists import top_words

_CJK_CHAR = re.compile(f"[{CJK_CHARS}]")
_ALNUM = re.compile(r"[^\W_]")
# Band search threads (``candidate_pairs``): numpy sorts release the GIL, so bands search in parallel;
# each thread holds one band's sort and pairs (~40 bytes a record), which bounds the count.
MAX_BAND_THREADS = 4
_TOKEN = re.compile(f"[{CJK_CHARS}]|[^\\W_]+")


@dataclass(frozen=True, slots=True)
class NearMatch:
    index: int  # the duplicate (position in the input sequence)
    canonical: int  # the record it was merged into
    similarity: float  # the verified similarity


def tokens(text: str) -> tuple[str, ...]:
    """Word tokens, with each CJK character a token of its own (NFKC, case-folded)."""
    return tuple(_TOKEN.findall(unicodedata.normalize("NFKC", text).casefold()))


@lru_cache(maxsize=4096)
def _verify_shingles(text: str, word_n: int, char_n: int) -> frozenset[str]:
    """A canonical is verified against many candidates: its shingle set is built once, not per pair."""
    return shingles(text, word_n, char_n)


def verified_similarity(a: str, b: str, config: DedupConfig) -> float:
    """The verification-shingle Jaccard, or the token alignment ratio when that is larger.

    >>> round(verified_similarity("we train a small model on new data", "we train a tiny model on new data",
    ...                           DedupConfig()), 3)
    0.875
    """
    ja = jaccard(
        _verify_shingles(a, config.verify_word_ngram, config.verify_char_ngram),
        _verify_shingles(b, config.verify_word_ngram, config.verify_char_ngram),
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


@lru_cache(maxsize=4)
def _signer(config: DedupConfig):
    # Imported on first use: datasketch is slow to import (its async LSH), and a run whose records
    # all carry their signatures (made per file, or cached) never signs anything here.
    from corpus_hygiene.dedup.minhash import Signer

    return Signer(config)


def signature_of(text: str, config: DedupConfig) -> bytes:
    """The MinHash signature of one text's LSH shingles: num_perm uint32, little-endian."""
    return _signer(config).sign(lsh_shingles(text, config)).hashvalues.astype("<u4").tobytes()


def signature_block(
    known: pa.Array, texts_at: Callable[[np.ndarray], Sequence[str]], config: DedupConfig
) -> np.ndarray:
    """One uint32 row per item of ``known`` (Arrow binary): the item itself when it is a signature of this
    config's size (signatures made per file), read from the Arrow buffer with no bytes object a row;
    otherwise signed from its text, ``texts_at(rows)`` giving the texts of those rows only."""
    rows = np.empty((len(known), config.num_perm), dtype=np.uint32)
    whole = pc.fill_null(pc.equal(pc.binary_length(known), 4 * config.num_perm), False).to_numpy(False)
    if whole.any():
        fixed = known.filter(pa.array(whole)).cast(pa.binary(4 * config.num_perm))  # one buffer of rows
        values = np.frombuffer(fixed.buffers()[1], dtype="<u4", offset=4 * config.num_perm * fixed.offset)
        rows[whole] = values[: len(fixed) * config.num_perm].reshape(-1, config.num_perm)
    missing = np.flatnonzero(~whole)
    if len(missing):
        rows[missing] = [np.frombuffer(signature_of(t, config), "<u4") for t in texts_at(missing)]
    return rows


def signature_slices(texts: Sequence[str], config: DedupConfig, known: Sequence[bytes] = ()):
    """The signatures of ``texts`` as (start, rows) slices of ``SIGNATURE_ROWS`` rows (``signature_block``;
    ``known``: one per text, or none). Both are read a slice at a time (they may be read from disk:
    ``pipeline/staging.py``)."""
    n = len(texts)
    for lo in range(0, n, SIGNATURE_ROWS):
        hi = min(n, lo + SIGNATURE_ROWS)
        blobs = arrow_slice(known, slice(lo, hi), pa.binary())
        yield lo, signature_block(blobs, lambda rows, lo=lo: _take(texts, lo + rows), config)


def arrow_slice(values: Sequence, records: slice, type_: pa.DataType) -> pa.Array:
    """``values[records]`` as one Arrow array, read as Arrow when it comes from disk (``StagedColumn``);
    nulls when ``values`` is empty (no signatures given)."""
    if hasattr(values, "arrow"):
        return values.arrow(records)
    return pa.array(list(values[records]) if len(values) else [None] * (records.stop - records.start), type_)


SIGNATURE_ROWS = 1 << 14


def signature_matrix(texts: Sequence[str], config: DedupConfig, known: Sequence[bytes] = ()) -> np.ndarray:
    """The signatures of ``texts`` (``signature_slices``), one uint32 row per text."""
    matrix = np.empty((len(texts), config.num_perm), dtype=np.uint32)
    for lo, rows in signature_slices(texts, config, known):
        matrix[lo : lo + len(rows)] = rows
    return matrix


def band_keys(signatures: np.ndarray, band: int, rows: int) -> np.ndarray:
    """The band's rows as whole uint64 words (two uint32 per word), so equal bands are equal rows."""
    block = signatures[:, band * rows : (band + 1) * rows]
    if rows % 2:
        block = np.hstack([block, np.zeros((len(block), 1), dtype=np.uint32)])
    return np.ascontiguousarray(block).view(np.uint64)


def cjk_mask(texts: Sequence[str]) -> np.ndarray:
    """True for a text written mostly in Chinese/Japanese/Korean characters (over half its letters)."""
    return np.array([2 * len(_CJK_CHAR.findall(t)) > len(_ALNUM.findall(t)) for t in texts], dtype=bool)


def reach_floor(x_values: np.ndarray, y_values: np.ndarray, both_cjk: np.ndarray, config: DedupConfig):
    """True for the pairs of rows with enough equal values for a MinHash estimate at the floor
    (``min_candidate_jaccard``, or ``min_candidate_jaccard_cjk`` for two CJK texts). On the signatures'
    low bytes a necessary condition; on whole signatures the floor itself."""
    need, need_cjk = config.min_candidate_jaccard, config.min_candidate_jaccard_cjk
    floor = np.where(both_cjk, need_cjk * config.num_perm, need * config.num_perm)
    return np.count_nonzero(x_values == y_values, axis=1) >= floor


def _estimate_filter(
    a: np.ndarray,
    b: np.ndarray,
    signatures: np.ndarray,
    low: np.ndarray,
    cjk: np.ndarray,
    config: DedupConfig,
) -> np.ndarray:
    """The pairs (a[k], b[k]) whose MinHash estimate of the Jaccard reaches ``min_candidate_jaccard`` (or,
    for two CJK texts, ``min_candidate_jaccard_cjk``), as codes ``max * n + min``; numpy only.

    ``low`` is the signatures' low bytes: two equal values have equal low bytes, so a pair with fewer
    equal low bytes than the floor cannot reach it, and is dropped after reading a quarter of the bytes
    (nearly every pair of a large LSH bucket; the rest are compared in full, so the result is exact)."""
    n = len(signatures)
    kept = [np.empty(0, dtype=np.int64)]
    for lo in range(0, len(a), 1 << 16):
        x, y = a[lo : lo + (1 << 16)], b[lo : lo + (1 << 16)]
        maybe = reach_floor(low[x], low[y], cjk[x] & cjk[y], config)
        x, y = x[maybe], y[maybe]
        sure = reach_floor(signatures[x], signatures[y], cjk[x] & cjk[y], config)
        x, y = x[sure], y[sure]
        kept.append(np.maximum(x, y).astype(np.int64) * n + np.minimum(x, y))
    return np.concatenate(kept)


def candidate_pairs(signatures: np.ndarray, config: DedupConfig, cjk: np.ndarray | None = None) -> np.ndarray:
    """Every pair that shares at least one LSH band and whose MinHash estimate of the Jaccard reaches
    ``min_candidate_jaccard``, as sorted unique codes ``j * n + i`` with i < j.

    Banded LSH by sort and group (DESIGN §5): per band, the records are sorted on the band's values
    and each run of equal values yields its pairs, which are filtered on their estimate at once; no
    table of buckets is kept, and only the pairs that pass are. Memory: the signatures (4 × num_perm
    bytes a record), one band's sort (~24 bytes a record) and one band's pairs (~16 bytes a pair).
    """
    n = len(signatures)
    cjk = np.zeros(n, dtype=bool) if cjk is None else cjk
    low = signatures.astype(np.uint8)  # the low byte of every value (see _estimate_filter)

    def band_pairs(band: int) -> list[np.ndarray]:
        keys = band_keys(signatures, band, config.rows)
        order = np.lexsort(keys.T[::-1])
        ordered = keys[order]
        same = np.all(ordered[1:] == ordered[:-1], axis=1)
        del keys, ordered
        return [_estimate_filter(a, b, signatures, low, cjk, config) for a, b in all_pairs(order, same)]

    # numpy sorts and compares without the GIL: the bands are searched in threads, one band each at a
    # time (each holds its own sort and pairs). The result is a sorted set: the same whatever the order.
    with ThreadPoolExecutor(band_threads(), thread_name_prefix="lsh-band") as pool:
        kept = [
            np.empty(0, dtype=np.int64),
            *(c for codes in pool.map(band_pairs, range(config.bands)) for c in codes),
        ]
    return np.unique(np.concatenate(kept))


def fresh_candidate_pairs(
    slices, fresh: np.ndarray, fresh_rows: np.ndarray, config: DedupConfig, cjk: np.ndarray
) -> np.ndarray:
    """The pairs of ``candidate_pairs`` that have a fresh record (``fresh``: a mask; the others are known
    from an earlier run, ``incremental/pair_memo.py``), without every signature at once: ``slices``
    yields (start, rows) of all the records' signatures in order (``signature_slices``), and
    ``fresh_rows`` are the fresh records' own. Each slice's band values are looked up among the fresh
    records' (by a sorted 64-bit hash, then compared whole), and the pairs found pass the estimate
    filter at once. Memory: the fresh records' signatures and one slice's, not N's; work: the sizes of
    the fresh records' buckets."""
    n, where = len(fresh), np.flatnonzero(fresh)
    if not len(where):  # only removals: no signature needs reading
        return np.empty(0, dtype=np.int64)
    fresh_low, fresh_cjk = fresh_rows.astype(np.uint8), cjk[where]
    bands = []  # per band: the fresh records' band hashes sorted, their band words and rows in that order
    for band in range(config.bands):
        keys = band_keys(fresh_rows, band, config.rows)
        hashed = band_hash(keys)
        order = np.argsort(hashed, kind="stable")
        # a table of the hashes' top bits first: the binary search then only sees the few rows that pass
        table = np.zeros(1 << HASH_TABLE_BITS, dtype=bool)
        table[hashed >> np.uint64(64 - HASH_TABLE_BITS)] = True
        bands.append((table, hashed[order], keys[order], order))
    kept = [np.empty(0, dtype=np.int64)]
    for lo, rows in slices:
        low = rows.astype(np.uint8)
        for band, (table, hashes, fresh_keys, order) in enumerate(bands):
            keys = band_keys(rows, band, config.rows)
            hashed = band_hash(keys)
            maybe = np.flatnonzero(table[hashed >> np.uint64(64 - HASH_TABLE_BITS)])
            wanted = hashed[maybe]
            first = np.searchsorted(hashes, wanted, "left")
            for k, y in _runs(first, np.searchsorted(hashes, wanted, "right") - first):
                x = maybe[k]
                same = np.all(keys[x] == fresh_keys[y], axis=1) & (lo + x != where[order[y]])
                x, f = x[same], order[y[same]]
                both = cjk[lo + x] & fresh_cjk[f]
                # the low bytes first, as in _estimate_filter
                sure = reach_floor(low[x], fresh_low[f], both, config)
                x, f, both = x[sure], f[sure], both[sure]
                sure = reach_floor(rows[x], fresh_rows[f], both, config)
                x, y = lo + x[sure].astype(np.int64), where[f[sure]].astype(np.int64)
                kept.append(np.maximum(x, y) * n + np.minimum(x, y))
    return np.unique(np.concatenate(kept))


HASH_TABLE_BITS = 18


def _runs(first: np.ndarray, count: np.ndarray, chunk: int = 1 << 16):
    """The pairs (x, first[x] + k) for every k < count[x], as two arrays, ~``chunk`` pairs at a time (at
    least one x's)."""
    rows = np.flatnonzero(count)
    ends = np.cumsum(count[rows])
    start = 0
    while start < len(rows):
        done = int(ends[start - 1]) if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, done + chunk, "right")))
        mine, sizes = rows[start:stop], count[rows[start:stop]]
        x = np.repeat(mine, sizes)
        yield x, np.repeat(first[mine] - (np.cumsum(sizes) - sizes), sizes) + np.arange(len(x))
        start = stop


def band_threads() -> int:
    """Threads for the band search: one a core, at most ``MAX_BAND_THREADS`` (the memory of a band's
    search is held once per thread)."""
    return max(1, min(MAX_BAND_THREADS, os.cpu_count() or 1))


def band_hash(keys: np.ndarray, start: int = 0) -> np.ndarray:
    """One uint64 for each row of band words (``band_keys``), from ``start``; it wraps modulo 2**64, so
    equal hashes are compared on the words afterwards."""
    hashed = np.full(len(keys), start, dtype=np.uint64)
    for word in range(keys.shape[1]):
        hashed = hashed * np.uint64(0x9E3779B97F4A7C15) + keys[:, word]
    return hashed


def all_pairs(order: np.ndarray, same: np.ndarray):
    """Every pair of records in one run of equal band values (``same[k]``: sorted positions k and k+1
    are equal), as arrays of record indices, a gap at a time: positions ``gap`` apart in one run."""
    n = len(order)
    run = np.concatenate(([0], np.cumsum(~same)))
    starts, gap = np.flatnonzero(same), 1
    while starts.size:
        yield order[starts], order[starts + gap]
        gap += 1
        starts = starts[starts + gap < n]
        starts = starts[run[starts + gap] == run[starts]]


def _pair_key(keys: np.ndarray, i: int, j: int) -> tuple[bytes, bytes]:
    """The memo's key of a pair: its texts' keys in order (the similarity is symmetric)."""
    a, b = keys[i].tobytes(), keys[j].tobytes()
    return (a, b) if a <= b else (b, a)


KEY_ROWS = 65_536  # text keys read at a time


def _key_rows(texts: Sequence[str], text_keys: Sequence[bytes]) -> np.ndarray:
    """The texts' memo keys (``text_key``) as an (n, 16) array, read ``KEY_ROWS`` at a time (they may
    be read from disk); one missing (a record made without one) is computed."""
    n = len(texts)
    rows = np.empty((n, TEXT_KEY_BYTES), np.uint8)
    for lo in range(0, n, KEY_ROWS):
        hi = min(n, lo + KEY_ROWS)
        given = list(text_keys[lo:hi])
        given += [b""] * (hi - lo - len(given))
        keys = (k if len(k) == TEXT_KEY_BYTES else text_key(texts[lo + i]) for i, k in enumerate(given))
        rows[lo:hi] = np.frombuffer(b"".join(keys), np.uint8).reshape(-1, TEXT_KEY_BYTES)
    return rows


def _pairs(codes: np.ndarray, n: int):
    """The (later, earlier) record indices of pair codes, as Python ints."""
    return zip((codes // n).tolist(), (codes % n).tolist(), strict=True)


def _texts_of_pairs(texts: Sequence[str], codes: np.ndarray, n: int) -> dict[int, str]:
    """The texts the candidate pairs ``codes`` need, by index, read at once: ``texts`` may be read from
    disk (``staging.StagedColumn.take``), where a text at a time would open a file each."""
    if not len(codes):
        return {}
    wanted = np.unique(np.concatenate([codes // n, codes % n]))
    return dict(zip(wanted.tolist(), _take(texts, wanted), strict=True))


def _similarity(
    texts: Sequence[str] | dict[int, str],
    i: int,
    j: int,
    config: DedupConfig,
    memo: PairMemo | None,
    keys: np.ndarray,
) -> float:
    """Pair (i, j)'s similarity: from the memo, else computed now (and memoised)."""
    if memo is None:
        return verified_similarity(texts[i], texts[j], config)
    key = _pair_key(keys, i, j)
    sim = memo.get(key)
    if sim is None:
        sim = verified_similarity(texts[i], texts[j], config)
        memo.put(key, sim)
    return sim


def _record_candidates(memo: PairMemo, ids: np.ndarray, codes: np.ndarray) -> None:
    n = len(ids)
    memo.record_candidates(ids, np.stack([ids[codes // n], ids[codes % n]], axis=1))


def _positions(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The index in ``ids`` of each of ``wanted`` (any shape), or -1 where it is not there."""
    order = np.argsort(ids, kind="stable")
    found, at = lookup(ids[order], wanted.ravel(), order)
    return np.where(found, at, -1).reshape(wanted.shape)


def _candidates_with_memo(
    texts: Sequence[str],
    signatures: Sequence[bytes],
    config: DedupConfig,
    cjk: np.ndarray,
    ids: np.ndarray,
    memo: PairMemo,
) -> np.ndarray:
    """The candidate pairs of a re-run: the previous run's among the texts it indexed, and a search
    (``fresh_candidate_pairs``) for the pairs with a text it did not (``incremental/pair_memo.py`` says
    why that is exact). ``ids``: the texts' ``index_keys``."""
    n = len(ids)
    fresh = ~lookup(memo.indexed, ids)[0]
    where = np.flatnonzero(fresh)
    fresh_rows = signature_matrix(_take(texts, where), config, _take(signatures, where))
    new = fresh_candidate_pairs(signature_slices(texts, config, signatures), fresh, fresh_rows, config, cjk)
    i, j = _positions(ids, memo.candidates).T  # one sort of ids for both columns
    both = (i >= 0) & (j >= 0)  # pairs of texts still here
    old = np.maximum(i[both], j[both]) * n + np.minimum(i[both], j[both])
    return np.unique(np.concatenate([new, old]))


def _take(values: Sequence, indices: np.ndarray) -> list:
    """``values`` at ``indices``, read at once where they are read from disk (``StagedColumn.take``); an
    empty sequence stays empty (no signatures given)."""
    if hasattr(values, "take"):
        return values.take(indices)
    return [values[i] for i in indices.tolist()] if len(values) else []


class PairSearch(Protocol):
    """A search done elsewhere (``flows/on_dask.py`` on a cluster): the candidate pairs as sorted codes
    ``later * n + earlier`` and each one's verified similarity, unrounded."""

    def __call__(
        self, texts: Sequence[str], signatures: Sequence[bytes], cjk: np.ndarray, config: DedupConfig
    ) -> tuple[np.ndarray, np.ndarray]: ...


def find_near_duplicates(
    texts: Sequence[str],
    config: DedupConfig,
    signatures: Sequence[bytes] = (),
    cjk: Sequence[bool] | None = None,
    memo: PairMemo | None = None,
    text_keys: Sequence[bytes] = (),
    verified: list[tuple[int, int, float]] | None = None,
    search: PairSearch | None = None,
) -> list[NearMatch]:
    """``texts`` must be in canonical-rank order (best first); returns one match per duplicate.

    ``signatures[i]`` (``signature_of``), where given, is the signature of ``texts[i]`` made earlier;
    ``cjk[i]`` whether text i is Chinese/Japanese/Korean (from its language; else ``cjk_mask``);
    ``memo`` holds the candidate pairs and similarities of an earlier run (``incremental/pair_memo.py``), and
    receives this run's; ``text_keys[i]``, where given, is ``memo.text_key(texts[i])`` made earlier;
    ``verified``, where given, receives (i, j, similarity) of every pair verified, above the threshold or not;
    ``search``, where given, finds and verifies the candidates instead of this process (the memo then
    only receives them).
    """
    mask = cjk_mask(texts) if cjk is None else np.asarray(cjk, dtype=bool)
    keys = ids = np.empty(0)
    if memo is not None:
        keys = _key_rows(texts, text_keys)
        ids = index_keys(keys, mask)
    if search is not None:
        codes, sims = search(texts, signatures, mask, config)
        if memo is not None:
            _record_candidates(memo, ids, codes)

        def similarity(k: int, i: int, j: int) -> float:
            if memo is not None:
                memo.put(_pair_key(keys, i, j), float(sims[k]))
            return float(sims[k])

    else:
        if memo is not None and len(memo.indexed):
            codes = _candidates_with_memo(texts, signatures, config, mask, ids, memo)
        else:
            codes = candidate_pairs(signature_matrix(texts, config, signatures), config, mask)
        unknown = codes
        if memo is not None:
            _record_candidates(memo, ids, codes)
            lacking = [_pair_key(keys, i, j) not in memo.known for i, j in _pairs(codes, len(texts))]
            unknown = codes[np.array(lacking, dtype=bool)]
        needed = _texts_of_pairs(texts, unknown, len(texts))  # a re-run reads only what the memo lacks

        def similarity(k: int, i: int, j: int) -> float:
            return _similarity(needed, i, j, config, memo, keys)

    matches = star_pass(len(texts), codes, similarity, config.threshold, verified)
    _verify_shingles.cache_clear()  # up to 4096 shingle sets: memory the rest of the run can use
    return matches


def star_pass(
    n: int,
    codes: np.ndarray,
    similarity: Callable[[int, int, int], float],
    threshold: float,
    verified: list[tuple[int, int, float]] | None = None,
) -> list[NearMatch]:
    """The clusters: each record (the later of its pairs, in rank order) joins the most similar of its
    candidates that are still canonical, if that reaches ``threshold``. ``similarity(k, i, j)``: of pair
    ``codes[k]`` = (i, j); asked only for pairs whose earlier record is still canonical."""
    if not len(codes):
        return []
    later, earlier = codes // n, codes % n
    bounds = (np.flatnonzero(np.diff(later)) + 1).tolist()
    canonical = np.ones(n, dtype=bool)
    matches: list[NearMatch] = []
    for lo, hi in zip([0, *bounds], [*bounds, len(codes)], strict=True):
        i = int(later[lo])
        best, best_sim = None, -1.0
        # ascending: on equal similarity the earlier canonical wins
        for k, j in enumerate(earlier[lo:hi].tolist(), start=lo):
            if not canonical[j]:
                continue
            sim = similarity(k, i, j)
            if verified is not None:
                verified.append((i, j, round(sim, 6)))
            if sim > best_sim:
                best, best_sim = j, sim
        if best is not None and best_sim >= threshold:
            matches.append(NearMatch(i, best, round(best_sim, 6)))
            canonical[i] = False
    return matches
