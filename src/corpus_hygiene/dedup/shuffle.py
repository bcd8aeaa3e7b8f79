"""Banded LSH as a shuffle on a Dask cluster: ``near.candidate_pairs`` for a cluster's workers
(docs/scaling.md, "Past one machine", steps 1-3).

What this adds to dask.dataframe: the rows it shuffles, one ``(band, band words…, rank)`` row per
record and band, made on the workers from row ranges of the signature matrix; after the shuffle on
(band, words) each partition holds whole buckets, which are sorted and grouped exactly as
``near.candidate_pairs`` does, and their pairs filtered on the MinHash estimate where they are. The
result is the same sorted codes ``j * n + i`` (tested against ``candidate_pairs``), whatever the
number of partitions or workers.

Not yet the whole plan: every worker gets the signature matrix once (4 × num_perm bytes a record, 512
MB for 1M records at 128 permutations) for the estimate filter, where step 3 joins the pairs with a
signature table spread over the cluster; and the flow does not call it yet (its one-machine search,
with the signatures already in the flow process, is faster at the sizes measured).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.near import _all_pairs, _band_keys, _estimate_filter

ROWS_PER_TASK = 1 << 16  # records whose band rows one task makes (bands rows each: 28 bytes at 4 values)


def _words(config: DedupConfig) -> list[str]:
    """The columns of a band's value: the band's uint32 values as uint64 words (two per word)."""
    return [f"w{k}" for k in range((config.rows + 1) // 2)]


def band_rows(signatures: np.ndarray, lo: int, hi: int, config: DedupConfig) -> pd.DataFrame:
    """The shuffle's input for records ``lo`` to ``hi``: a row per record and band, with the band's
    value as uint64 words and the record's rank (its row in the signature matrix)."""
    ranks = np.arange(lo, hi, dtype=np.int64)
    columns: dict[str, list[np.ndarray]] = {"band": [], "rank": []} | {w: [] for w in _words(config)}
    for band in range(config.bands):
        keys = _band_keys(signatures[lo:hi], band, config.rows)
        columns["band"].append(np.full(hi - lo, band, dtype=np.int32))
        columns["rank"].append(ranks)
        for k, word in enumerate(_words(config)):
            columns[word].append(keys[:, k])
    return pd.DataFrame({name: np.concatenate(parts) for name, parts in columns.items()})


def bucket_pairs(
    part: pd.DataFrame, signatures: np.ndarray, low: np.ndarray, cjk: np.ndarray, config: DedupConfig
) -> pd.DataFrame:
    """The candidate pairs of one partition's buckets, as codes: records sorted on (band, words),
    each run of equal values gives its pairs (``near._all_pairs``), kept when their estimate reaches
    the floor (``near._estimate_filter``)."""
    words = _words(config)
    key_columns = [part["band"].to_numpy().astype(np.uint64)] + [part[w].to_numpy() for w in words]
    order = np.lexsort(key_columns[::-1])
    keys = np.column_stack(key_columns)[order]
    same = np.all(keys[1:] == keys[:-1], axis=1)
    ranks = part["rank"].to_numpy()[order]
    kept = [np.empty(0, dtype=np.int64)]
    kept.extend(_estimate_filter(a, b, signatures, low, cjk, config) for a, b in _all_pairs(ranks, same))
    return pd.DataFrame({"code": np.concatenate(kept)})


def candidate_pairs_on_cluster(
    client,
    signatures: np.ndarray,
    config: DedupConfig,
    cjk: np.ndarray | None = None,
    partitions: int | None = None,
) -> np.ndarray:
    """``near.candidate_pairs(signatures, config, cjk)`` computed on the workers of ``client`` (a
    ``distributed.Client``): the band rows are made in tasks of ``ROWS_PER_TASK`` records, shuffled
    into ``partitions`` partitions (default: two per worker thread), and each partition's buckets
    grouped and filtered where it lies. Only the surviving pairs come back."""
    import dask.dataframe as dd
    from dask import delayed

    n = len(signatures)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    cjk = np.zeros(n, dtype=bool) if cjk is None else cjk
    # imported on each worker before any task arrives: two of its threads unpickling the first shuffle
    # tasks at once raced on the import and the worker died (KeyError: 'dask.dataframe')
    client.run(_import_dataframe)
    # once to every worker: the matrix, its low bytes (the estimate filter's first pass) and the CJK mask
    shared = client.scatter([signatures, signatures.astype(np.uint8), cjk], broadcast=True)
    sig, low, mask = (delayed(future) for future in shared)
    parts = [
        delayed(band_rows)(sig, lo, min(lo + ROWS_PER_TASK, n), config) for lo in range(0, n, ROWS_PER_TASK)
    ]
    rows = dd.from_delayed(parts, meta=band_rows(signatures, 0, 0, config), verify_meta=False)
    if partitions is None:
        partitions = 2 * max(1, sum(w["nthreads"] for w in client.scheduler_info()["workers"].values()))
    shuffled = rows.shuffle(on=["band", *_words(config)], npartitions=partitions)
    meta = pd.DataFrame({"code": np.empty(0, dtype=np.int64)})
    codes = shuffled.map_partitions(bucket_pairs, sig, low, mask, config, meta=meta)
    found = client.compute(codes).result()["code"].to_numpy()
    return np.unique(found)


def _import_dataframe() -> None:
    import dask.dataframe  # noqa: F401
