"""The near-duplicate search of ``near.py`` cut into pieces a cluster runs apart (``flows/on_dask.py``
wires them), with the same result: the same candidate pairs and the same similarities.

1. ``band_rows``: a chunk of records (consecutive ranks) becomes one row per record and band, keyed by
   (band, band value) and sent to the part that key hashes to. A row carries the record's rank, CJK flag
   and signature low bytes (``lsh.reach_floor``), not the whole signature.
2. ``bucket_candidates``: a part sorts and groups its rows exactly as ``lsh.candidate_pairs`` sorts a
   band, and keeps the pairs whose low bytes can reach the estimate floor (a necessary condition).
3. ``pick`` + ``verify_pairs``: a few thousand pairs at a time, with the records they need picked from
   their chunks, are checked on the whole signatures (the exact floor) and verified on the texts:
   ``(codes, similarities)``.
The star pass (``near.star_pass``) then needs only the codes and similarities, not the texts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.lsh import all_pairs, band_hash, band_keys, reach_floor
from corpus_hygiene.dedup.signatures import arrow_slice, signature_block
from corpus_hygiene.dedup.similarity import verified_similarity


@dataclass(frozen=True, slots=True)
class Chunk:
    """Records by rank (ascending), with their texts, signatures and CJK flags. The texts are one Arrow
    array, read so from the staging: the flow makes no str of them (a str a text, and its pickled copy,
    would stay in the flow's heap once freed), and they travel as its buffers."""

    ranks: np.ndarray  # int64
    texts: pa.StringArray
    signatures: np.ndarray  # len(texts) × num_perm uint32
    cjk: np.ndarray  # bool

    def at(self, ranks: np.ndarray) -> np.ndarray:
        """The positions of ``ranks``, which the chunk holds."""
        return np.searchsorted(self.ranks, ranks)


def make_chunk(texts, signatures, cjk, records: slice, config: DedupConfig) -> Chunk:
    """The chunk of ``records`` (a slice of the rank-ordered inputs of ``near.find_near_duplicates``;
    ``texts`` read from the staging, ``StagedColumn``, or a list)."""
    mine = arrow_slice(texts, records, pa.string())
    known = arrow_slice(signatures, slice(records.start, records.start + len(mine)), pa.binary())
    matrix = signature_block(known, lambda rows: mine.take(pa.array(rows)).to_pylist(), config)
    ranks = np.arange(records.start, records.start + len(mine), dtype=np.int64)
    return Chunk(ranks, mine, matrix, np.asarray(cjk[records], dtype=bool))


def pick(chunk: Chunk, ranks: np.ndarray) -> Chunk:
    """The records of ``ranks`` (sorted, unique): what a verification task needs of a chunk, so that
    only they travel, not the chunk."""
    at = chunk.at(ranks)
    return Chunk(chunk.ranks[at], chunk.texts.take(pa.array(at)), chunk.signatures[at], chunk.cjk[at])


def _part_of(band: int, keys: np.ndarray, parts: int) -> np.ndarray:
    """The part each (band, band value) goes to: a hash of both, the same on every worker."""
    return ((band_hash(keys, band + 1) >> np.uint64(32)) % np.uint64(parts)).astype(np.intp)


def band_rows(chunk: Chunk, bands: range, parts: int, config: DedupConfig) -> list[dict[str, np.ndarray]]:
    """The chunk's rows of ``bands``, split into ``parts`` (item p goes to part p)."""
    ranks = chunk.ranks
    low = chunk.signatures.astype(np.uint8)
    out: list[list[dict[str, np.ndarray]]] = [[] for _ in range(parts)]
    for band in bands:
        keys = band_keys(chunk.signatures, band, config.rows)
        part = _part_of(band, keys, parts)
        for p in range(parts):
            mine = np.flatnonzero(part == p)
            out[p].append(
                {
                    "band": np.full(len(mine), band, dtype=np.int32),
                    "key": keys[mine],
                    "rank": ranks[mine],
                    "low": low[mine],
                    "cjk": chunk.cjk[mine],
                }
            )
    return [_concat(pieces) for pieces in out]


def _concat(pieces: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {name: np.concatenate([p[name] for p in pieces]) for name in pieces[0]}


def bucket_candidates(pieces: list[dict[str, np.ndarray]], n: int, config: DedupConfig) -> np.ndarray:
    """The pairs of one part's rows that share a (band, band value) and whose low bytes can reach the
    estimate floor, as sorted unique codes ``later * n + earlier`` (ranks)."""
    rows = _concat(pieces)
    if not len(rows["rank"]):
        return np.empty(0, dtype=np.int64)
    columns = np.column_stack([rows["band"].astype(np.uint64), rows["key"]])
    order = np.lexsort(columns.T[::-1])
    ordered = columns[order]
    same = np.all(ordered[1:] == ordered[:-1], axis=1)
    del columns, ordered
    low, cjk, rank = rows["low"], rows["cjk"], rows["rank"]
    kept = [np.empty(0, dtype=np.int64)]
    for a, b in all_pairs(order, same):
        for lo in range(0, len(a), 1 << 16):
            x, y = a[lo : lo + (1 << 16)], b[lo : lo + (1 << 16)]
            keep = reach_floor(low[x], low[y], cjk[x] & cjk[y], config)
            x, y = x[keep], y[keep]
            kept.append(np.maximum(rank[x], rank[y]) * n + np.minimum(rank[x], rank[y]))
    return np.unique(np.concatenate(kept))


def verify_pairs(
    codes: np.ndarray, later: Chunk, earlier: Chunk, n: int, config: DedupConfig
) -> tuple[np.ndarray, np.ndarray]:
    """Of the pairs ``codes`` (later record in ``later``, earlier in ``earlier``), those whose whole
    signatures reach the estimate floor, with their verified similarities (unrounded)."""
    i, j = later.at(codes // n), earlier.at(codes % n)
    sure = reach_floor(later.signatures[i], earlier.signatures[j], later.cjk[i] & earlier.cjk[j], config)
    i, j = i[sure], j[sure]
    mine, theirs = later.texts.to_pylist(), earlier.texts.to_pylist()
    pairs = zip(i.tolist(), j.tolist(), strict=True)
    sims = np.array([verified_similarity(mine[a], theirs[b], config) for a, b in pairs])
    return later.ranks[i] * n + earlier.ranks[j], sims
