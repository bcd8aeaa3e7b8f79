"""LSH candidate search on signature rows: records whose band values are equal, filtered by the
signature estimate, a band at a time on threads."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.similarity import ALNUM, CJK_CHAR

# Band search threads (``candidate_pairs``): numpy sorts release the GIL, so bands search in parallel;
# each thread holds one band's sort and pairs (~40 bytes a record), which bounds the count.
MAX_BAND_THREADS = 4


def band_keys(signatures: np.ndarray, band: int, rows: int) -> np.ndarray:
    """The band's rows as whole uint64 words (two uint32 per word), so equal bands are equal rows."""
    block = signatures[:, band * rows : (band + 1) * rows]
    if rows % 2:
        block = np.hstack([block, np.zeros((len(block), 1), dtype=np.uint32)])
    return np.ascontiguousarray(block).view(np.uint64)


def cjk_mask(texts: Sequence[str]) -> np.ndarray:
    """True for a text written mostly in Chinese/Japanese/Korean characters (over half its letters)."""
    return np.array([2 * len(CJK_CHAR.findall(t)) > len(ALNUM.findall(t)) for t in texts], dtype=bool)


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
