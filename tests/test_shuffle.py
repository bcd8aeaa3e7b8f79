"""Banded LSH as a shuffle on a Dask cluster (dedup/shuffle.py): the same pairs as the one-process search."""

import numpy as np
import pytest

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.near import candidate_pairs
from corpus_hygiene.dedup.shuffle import band_rows, bucket_pairs, candidate_pairs_on_cluster


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    # two worker processes of two threads: the shuffle's tasks run side by side in a worker too
    with LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=":0") as cluster:
        with Client(cluster) as c:
            yield c


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (8, 1)], ids=["4x4", "3x5-padded", "8x1"])
@pytest.mark.parametrize("partitions", [1, 7])
def test_the_shuffle_finds_exactly_the_pairs_of_the_one_process_search(client, shape, partitions):
    bands, rows = shape
    config = DedupConfig(num_perm=bands * rows, bands=bands, rows=rows, min_candidate_jaccard=0.3)
    rng = np.random.default_rng(bands * 10 + rows)
    signatures = rng.integers(0, 3, size=(400, bands * rows), dtype=np.uint32)  # few values: many buckets
    cjk = rng.random(400) < 0.3  # CJK pairs have their own floor
    expected = candidate_pairs(signatures, config, cjk)
    assert len(expected) > 100  # buckets of every size, pairs the filter keeps and drops
    got = candidate_pairs_on_cluster(client, signatures, config, cjk, partitions=partitions)
    assert got.dtype == np.int64
    assert got.tolist() == expected.tolist()


def test_no_records_no_pairs(client):
    config = DedupConfig(num_perm=8, bands=4, rows=2)
    assert candidate_pairs_on_cluster(client, np.empty((0, 8), dtype=np.uint32), config).tolist() == []


def test_band_rows_are_one_row_per_record_and_band_with_its_rank():
    config = DedupConfig(num_perm=6, bands=2, rows=3)  # 3 uint32 a band: two uint64 words, the last padded
    signatures = np.arange(18, dtype=np.uint32).reshape(3, 6)
    rows = band_rows(signatures, 1, 3, config)
    assert rows["band"].tolist() == [0, 0, 1, 1]
    assert rows["rank"].tolist() == [1, 2, 1, 2]
    assert rows["w0"].tolist() == [6 | 7 << 32, 12 | 13 << 32, 9 | 10 << 32, 15 | 16 << 32]
    assert rows["w1"].tolist() == [8, 14, 11, 17]


def test_equal_values_in_different_bands_make_no_pair():
    """The band is part of the bucket: record 1's band 1 equals record 0's band 0, and they share no band."""
    config = DedupConfig(num_perm=4, bands=2, rows=2, min_candidate_jaccard=0.0)
    signatures = np.array([[1, 2, 3, 4], [5, 6, 1, 2], [1, 2, 7, 8]], dtype=np.uint32)
    part = band_rows(signatures, 0, 3, config)
    low = signatures.astype(np.uint8)
    codes = bucket_pairs(part, signatures, low, np.zeros(3, dtype=bool), config)["code"].tolist()
    assert codes == [2 * 3 + 0]  # records 0 and 2 share band 0; record 1 pairs with no one
    assert candidate_pairs(signatures, config).tolist() == codes
