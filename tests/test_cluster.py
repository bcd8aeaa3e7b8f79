"""The near-duplicate search on a Dask cluster (dedup/cluster_search.py, flows/on_dask.ClusterSearch) finds
the
pairs and similarities of the one-process search, and a run on a cluster publishes the same bytes."""

import logging
import random
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.lsh import candidate_pairs, cjk_mask
from corpus_hygiene.dedup.near import find_near_duplicates
from corpus_hygiene.dedup.signatures import signature_of
from corpus_hygiene.reference.contamination import Contamination
from corpus_hygiene.reference.index import load
from corpus_hygiene.reference.match import match_chunk
from corpus_hygiene.reference.source import open_reference
from flows.on_dask import ClusterSearch

from .conftest import EXAMPLES, SEEDS, SHARED, needs_seeds, parquet_checksums
from .test_e2e import assert_clean_console, run_hygiene

SMALL = DedupConfig(num_perm=8, bands=4, rows=2, min_candidate_jaccard=0.25, min_candidate_jaccard_cjk=0.5)
WORDS = "graph neural network model training data learning method results task".split()
ZH = "图神经网络在分子性质预测任务中表现突出但其预测结果往往缺乏可解释性"


@pytest.fixture(scope="module")
def client():
    """Two worker threads in this process: the tasks, their data and their order as on a real cluster."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with Client(cluster) as c:
            yield c


def search(client) -> ClusterSearch:
    return ClusterSearch(client, logging.getLogger("test"))


@settings(max_examples=40)
@given(
    n=st.integers(0, 70),
    seed=st.integers(0, 2**32 - 1),
    spread=st.sampled_from([2, 3, 5]),
)
def test_the_candidates_are_those_of_one_process(client, n, seed, spread):
    """Signature values with few distinct low bytes and fewer distinct values: many equal bands, and low
    bytes that pass the floor where the whole values do not (the shuffle's floor is checked twice)."""
    rng = np.random.default_rng(seed)
    matrix = (rng.integers(0, spread, (n, 8)) * 256 + rng.integers(0, spread, (n, 8))).astype(np.uint32)
    cjk = rng.random(n) < 0.3
    blobs = [row.astype("<u4").tobytes() for row in matrix]
    codes, sims = search(client)([""] * n, blobs, cjk, SMALL)
    assert codes.tolist() == candidate_pairs(matrix, SMALL, cjk).tolist()
    assert len(sims) == len(codes)


def _corpus(rng: random.Random, n: int) -> list[str]:
    """Texts with planted near copies (a word or a character changed), English and Chinese."""
    texts: list[str] = []
    for i in range(n):
        if texts and rng.random() < 0.4:
            base = list(rng.choice(texts))
            base[rng.randrange(len(base))] = rng.choice("abcxyz图网")
            texts.append("".join(base))
        elif rng.random() < 0.3:
            texts.append("".join(rng.sample(ZH, 20)))
        else:
            texts.append(" ".join(rng.choice(WORDS) for _ in range(12)) + f" {i}")
    return texts


@settings(max_examples=25)
@given(n=st.integers(1, 120), seed=st.integers(0, 2**32 - 1))
def test_the_clusters_and_verified_pairs_are_those_of_one_process(client, n, seed):
    texts = _corpus(random.Random(seed), n)
    config = DedupConfig()
    signatures = [signature_of(t, config) for t in texts]
    cjk = cjk_mask(texts)
    here, there = [], []
    expected = find_near_duplicates(texts, config, signatures, cjk, verified=here)
    got = find_near_duplicates(texts, config, signatures, cjk, verified=there, search=search(client))
    assert got == expected
    assert there == here


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**32 - 1))
def test_a_reference_is_searched_on_the_cluster_as_in_one_process(client, n, seed):
    rng = random.Random(seed)
    texts = _corpus(rng, 2 * n)
    theirs, mine = texts[::2], texts[1::2]  # near copies fall on either side
    config = DedupConfig()
    with tempfile.TemporaryDirectory() as folder:
        pq.write_table(pa.table({"text": theirs}), Path(folder) / "r.parquet")
        ref = load(open_reference(str(Path(folder) / "r.parquet")), config, Contamination(), Path(folder))
        ids = np.array([bytes(16)] * len(mine), "S16")
        signatures = np.array([np.frombuffer(signature_of(t, config), "<u4") for t in mine])
        args = ([ref], ids, mine, signatures, cjk_mask(mine), config, Contamination())
        here, there = match_chunk(*args), match_chunk(*args, search(client))
    for field in ("record", "reference", "row", "kind", "score"):
        assert getattr(there, field).tolist() == getattr(here, field).tolist()


def test_a_chunk_that_is_not_yet_signed_is_signed_on_the_way(client):
    texts = _corpus(random.Random(5), 60)
    config = DedupConfig()
    expected = find_near_duplicates(texts, config)
    assert expected  # the corpus has near copies
    assert find_near_duplicates(texts, config, search=search(client)) == expected


# --- a run on a cluster: a separately started `dask scheduler` and two `dask worker` processes ---

needs_corpora = pytest.mark.skipif(not (SHARED / "corpora").is_dir(), reason="../shared/corpora is absent")


def _same_bytes_on_the_cluster(corpus, tmp_path, dask_scheduler, *extra: str) -> str:
    """Runs ``corpus`` in one process and on the cluster, both with the options ``extra``; asserts equal
    Parquet bytes; returns the cluster run's console."""
    one = run_hygiene(corpus, tmp_path / "one", "--no-cache", *extra)
    assert one.returncode == 0, one.stderr[-3000:]
    cluster = run_hygiene(
        corpus, tmp_path / "cluster", "--no-cache", "--dask-address", dask_scheduler, *extra
    )
    assert cluster.returncode == 0, cluster.stderr[-3000:]
    assert_clean_console(cluster)
    expected = parquet_checksums(tmp_path / "one" / "clean")
    assert set(expected) == {"records.parquet", "duplicates.parquet", "quarantine.parquet", "pairs.parquet"}
    assert parquet_checksums(tmp_path / "cluster" / "clean") == expected
    return cluster.stdout + cluster.stderr


@pytest.mark.slow
@needs_seeds
def test_the_seed_files_on_a_cluster_and_against_references_publish_the_same_bytes(tmp_path, dask_scheduler):
    from benchmarks.common import seed_files

    corpus = tmp_path / "seeds"
    shutil.copytree(SEEDS, corpus)
    texts = [p for _, paragraphs in seed_files() for p in paragraphs]
    copies = [t if i % 2 else t.split(" ", 3)[-1] for i, t in enumerate(texts[::4])]  # exact, and near
    pq.write_table(pa.table({"text": copies}), tmp_path / "last_year.parquet")
    bench = EXAMPLES.parent / "reference" / "benchmark_items.parquet"
    refs = ("--reference", str(tmp_path / "last_year.parquet"), "--reference", str(bench))
    console = _same_bytes_on_the_cluster(corpus, tmp_path / "refs", dask_scheduler, *refs)
    assert "Task run 'index_references" in console
    duplicates = pq.read_table(tmp_path / "refs" / "one" / "clean" / "duplicates.parquet").to_pylist()
    assert sum(d["kind"] == "reference" for d in duplicates) >= len(copies) // 2  # the exact ones at least


@pytest.mark.slow
@needs_corpora
def test_a_20k_corpus_on_a_cluster_and_on_two_local_workers_publishes_the_same_bytes(
    tmp_path, dask_scheduler
):
    from benchmarks.bench_e2e import build

    corpus = tmp_path / "in"
    corpus.mkdir()
    build(corpus, 20_000, seed=7, prefix="bench")
    both = _same_bytes_on_the_cluster(corpus, tmp_path, dask_scheduler)
    searched = re.search(r"near-duplicate search on Dask: (\d+) records", both)
    records = pq.read_table(tmp_path / "cluster" / "clean" / "records.parquet").num_rows
    duplicates = pq.read_table(tmp_path / "cluster" / "clean" / "duplicates.parquet").num_rows
    assert records < int(searched[1]) < records + duplicates  # the canonicals of the exact step
    two = run_hygiene(corpus, tmp_path / "two", "--no-cache", "--workers", "2")
    assert two.returncode == 0, two.stderr[-3000:]
    assert_clean_console(two)
    both = two.stdout + two.stderr
    assert "Creating a new Dask cluster with `distributed.deploy.local.LocalCluster`" in both
    assert "processed on a local cluster of 2 workers" in both
    assert "process_files: 400/400 files" in both
    assert "near-duplicate search on Dask" not in both  # a local cluster is closed before the global step
    assert "dashboard" not in both.lower()  # there is none (no bokeh): no dead link
    assert "Task run 'process bench" not in both  # the batches are plain Dask tasks, not Prefect tasks
    assert parquet_checksums(tmp_path / "two" / "clean") == parquet_checksums(tmp_path / "one" / "clean")


def test_a_chunk_reads_its_texts_and_signatures_from_the_staging_as_arrow_and_texts_travel_as_buffers(policy):
    """The flow makes no str or bytes object of a chunk's texts and signatures (no ``StagedColumn.take``
    of them); pickled as Dask does (protocol 5), the texts are buffers outside the pickle; a list of texts
    gives the same chunk."""
    import pickle
    from unittest import mock

    from corpus_hygiene.dedup.cluster_search import make_chunk
    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline.process import process_file
    from corpus_hygiene.store.records import RecordStore, StagedColumn

    from .conftest import EXAMPLES

    store, config = RecordStore(), policy.dedup_config()
    store.add([process_file(f, policy) for f in discover(EXAMPLES, policy.max_file_bytes).files])
    positions = np.arange(len(store))[::-1]
    texts, signatures = store.column("text", positions), store.column("signature", positions)
    cjk, take = np.zeros(len(positions), bool), StagedColumn.take

    def no_objects(column, indices):
        assert column._name not in ("text", "signature"), f"the {column._name} column read as Python objects"
        return take(column, indices)

    with mock.patch.object(StagedColumn, "take", no_objects):
        chunk = make_chunk(texts, signatures, cjk, slice(3, 9), config)
    expected = [store.take(["text"], [p]).column(0)[0].as_py() for p in positions[3:9]]
    assert chunk.texts.to_pylist() == expected and chunk.ranks.tolist() == list(range(3, 9))
    from_list = make_chunk(list(texts), (), cjk, slice(3, 9), config)  # signatures made from the texts
    assert np.array_equal(from_list.signatures, chunk.signatures) and from_list.texts.equals(chunk.texts)
    buffers = []
    pickled = pickle.dumps(chunk, protocol=5, buffer_callback=buffers.append)
    text_bytes = sum(len(t.encode()) for t in expected)
    assert len(pickled) < text_bytes <= sum(len(b.raw()) for b in buffers)
    back = pickle.loads(pickled, buffers=buffers)
    assert back.texts.to_pylist() == expected and np.array_equal(back.signatures, chunk.signatures)


def test_a_local_cluster_is_started_only_when_the_work_it_shares_outweighs_its_start():
    from flows.on_dask import CLUSTER_START_SECONDS, STAGE_SECONDS_PER_MB, cluster_pays

    even = int(2 * CLUSTER_START_SECONDS / STAGE_SECONDS_PER_MB * 2**20)  # two workers break even here
    assert cluster_pays(even * 2, 2)[0] and not cluster_pays(even // 2, 2)[0]
    assert cluster_pays(even * 2, 4)[0] and not cluster_pays(even * 2, 1)[0]
    pays, line = cluster_pays(even // 2, 2)
    assert line.startswith(f"--workers 2: {even / 2 / 2**20:.1f} MB of new input")
    assert line.endswith("processed in this process (a cluster would not pay)")
