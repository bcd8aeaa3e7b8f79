"""The run's heavy work on Dask, through prefect-dask: ``--workers N`` makes a local cluster for the
per-file stage, and ``--dask-address`` uses a running scheduler for it and for the near-duplicate search
(``ClusterSearch``). Both are plain Dask tasks submitted through the runner's own client
(``DaskTaskRunner.client``): the workers run no Prefect code and need no Prefect API."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass
from operator import getitem

import numpy as np
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.logging import get_run_logger

from corpus_hygiene.dedup.cluster_search import band_rows, bucket_candidates, make_chunk, pick, verify_pairs
from corpus_hygiene.incremental.file_cache import FileCache
from corpus_hygiene.pipeline.batches import batches
from corpus_hygiene.pipeline.process import process_files
from corpus_hygiene.store.records import Packed, RecordStore, pack

# What ``cluster_pays`` weighs (benchmarks/bench_fixed.py measures both): the per-file stage's seconds a
# MB of input in one process, and a local cluster's wall from start to close, its workers' imports and
# word data included.
STAGE_SECONDS_PER_MB = 1.7
CLUSTER_START_SECONDS = 7.0
# Dask batches may be smaller than in-process ones: a Dask task costs a few ms, and short last batches
# let the workers finish together.
MIN_DASK_BATCH_BYTES = 256 << 10
# One thread a worker (the per-file work is pure Python under the GIL); no dashboard (bokeh is absent,
# and a fixed port would clash between runs).
CLUSTER_KWARGS = {
    "threads_per_worker": 1,
    "processes": True,
    "dashboard_address": None,
    "scheduler_kwargs": {"dashboard": False, "dashboard_address": ":0"},
}


class Progress:
    """The per-file stage's progress, logged and shown as a progress artifact in the Prefect UI as batches
    finish: every ``every`` seconds, and at the end."""

    def __init__(self, logger, total_files: int, every: float = 10.0) -> None:
        self.logger, self.total, self.every = logger, total_files, every
        self.files = self.paragraphs = 0
        self.start = self.last = time.perf_counter()
        self.artifact = create_progress_artifact(
            0.0 if total_files else 100.0,
            key="corpus-hygiene-progress",
            description=f"process_files: 0/{total_files} files",
        )

    def add(self, batch: list) -> None:
        self.files += len(batch)
        self.paragraphs += sum(r.source.n_paragraphs for r in batch)
        now = time.perf_counter()
        if now - self.last >= self.every or self.files == self.total:
            self.last = now
            rate = self.paragraphs / max(now - self.start, 1e-9)
            line = (
                f"process_files: {self.files}/{self.total} files, {self.paragraphs} paragraphs, "
                f"{rate:.0f} paragraphs/s"
            )
            self.logger.info(line)
            update_progress_artifact(self.artifact, 100.0 * self.files / max(self.total, 1), line)


def cluster_pays(new_bytes: int, workers: int) -> tuple[bool, str]:
    """Whether a local cluster of ``workers`` ends the per-file stage sooner than this process alone, its
    start and close included; and the one log line that says which and why."""
    alone = new_bytes / 2**20 * STAGE_SECONDS_PER_MB
    shared = CLUSTER_START_SECONDS + alone / workers
    pays = shared < alone
    how = f"on a local cluster of {workers} workers" if pays else "in this process (a cluster would not pay)"
    return pays, (
        f"--workers {workers}: {new_bytes / 2**20:.1f} MB of new input, ~{alone:.0f} s of work in one "
        f"process, ~{shared:.0f} s on {workers} workers with the cluster's ~{CLUSTER_START_SECONDS:.0f} s "
        f"start: processed {how}"
    )


def task_runner(workers: int, dask_address: str | None):
    import dask.config
    from prefect_dask import DaskTaskRunner

    # the workers' stack sampling feeds only a dashboard, and takes CPU from the per-file work
    dask.config.set({"distributed.worker.profile.enabled": False, "distributed.dashboard.link": ""})
    logging.getLogger("distributed").setLevel(logging.WARNING)  # every cluster step logs at INFO
    if dask_address:
        return DaskTaskRunner(address=dask_address)
    return DaskTaskRunner(cluster_kwargs=CLUSTER_KWARGS | {"n_workers": workers})


class ClusterLost(Exception):
    """The Dask cluster went away during the run (nothing is published)."""


@contextmanager
def dask_client(workers: int, dask_address: str | None):
    """The Dask client of the run's cluster (prefect-dask's runner, entered here rather than given to a
    subflow: a subflow's parameters, the file list, go to Prefect's API, which limits their size). A
    lost cluster, in any stage inside, ends the run with ``ClusterLost``."""
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    try:
        with task_runner(workers, dask_address) as runner:
            yield runner.client
    except (FutureCancelledError, CommClosedError) as exc:
        where = dask_address or f"the local cluster of {workers} workers"
        why = getattr(exc, "reason", None) or type(exc).__name__
        raise ClusterLost(f"lost the Dask cluster at {where} ({why}); re-run when it is back") from exc


def _threads(client) -> int:
    return sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()) or 1


def process_and_pack(files: list, policy, cache: FileCache | None) -> Packed:
    """A batch's results, packed where they are made (``store.records.pack``): the worker sends its records as
    one Arrow buffer, which the flow writes to the staging as it is, not as an object a field."""
    return pack(process_files(files, policy, cache))


def process_on_dask(client, files: list, policy, cache: FileCache | None, store: RecordStore) -> list:
    """The results of ``files``, in order, each batch's records staged in ``store`` as it arrives; progress
    logged as batches finish. Batches are plain Dask tasks: the workers run no Prefect code and need no
    Prefect API."""
    from distributed import as_completed

    groups = batches(files, _threads(client), min_bytes=MIN_DASK_BATCH_BYTES)
    futures = client.map(process_and_pack, groups, policy=policy, cache=cache, pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    results: list[list] = [[] for _ in futures]
    progress = Progress(get_run_logger(), len(files))
    for future in as_completed(futures, loop=client.loop):
        results[index[future.key]] = batch = store.add(future.result())
        future.release()  # the worker's copy: workers would otherwise hold every result to the end
        progress.add(batch)
    return [r for batch in results for r in batch]


# The near-duplicate search on the cluster (dedup/cluster_search.py). Records are cut into at least
# CHUNKS_PER_THREAD chunks a worker thread (so every thread has work), of at most CHUNK_RECORDS;
# at most ROWS_IN_FLIGHT (record, band) rows travel at once (bands go in waves: docs/design.md §6).
CHUNK_RECORDS = 25_000
CHUNKS_PER_THREAD = 4
ROWS_IN_FLIGHT = 4_000_000
PAIRS_PER_TASK = 2_000  # verification tasks: many, so the workers finish together


@dataclass(frozen=True)
class ClusterSearch:
    """``near.PairSearch`` on a Dask cluster: band rows shuffled by (band, band value), candidates
    grouped per part, verified where the chunks are. The flow holds only codes and similarities."""

    client: object
    logger: logging.Logger | logging.LoggerAdapter

    def __call__(self, texts, signatures, cjk, config, against: int = 0) -> tuple[np.ndarray, np.ndarray]:
        n, threads = len(texts), _threads(self.client)
        if not n:
            return np.empty(0, dtype=np.int64), np.empty(0)
        size = max(1, min(CHUNK_RECORDS, -(-n // (CHUNKS_PER_THREAD * threads))))
        # made and sent one at a time (the flow holds one chunk's matrix at most); keys not from the content:
        # two searches of equal chunks would share one key, and the first one's release loses the second's
        chunks = [
            self.client.scatter(make_chunk(texts, signatures, cjk, slice(lo, lo + size), config), hash=False)
            for lo in range(0, n, size)
        ]
        codes = self._candidates(chunks, n, config, parts=max(1, min(len(chunks), 2 * threads)))
        if against:  # a record against a reference's rows: the pairs among either are not asked for
            codes = codes[(codes // n >= against) & (codes % n < against)]
        blocks = (codes // n // size) * len(chunks) + codes % n // size  # (later chunk, earlier chunk)
        order = np.argsort(blocks, kind="stable")
        codes, blocks = codes[order], blocks[order]
        tasks = []
        for group in np.split(codes, np.flatnonzero(np.diff(blocks)) + 1) if len(codes) else []:
            later, earlier = chunks[group[0] // n // size], chunks[group[0] % n // size]
            for piece in np.array_split(group, -(-len(group) // PAIRS_PER_TASK)):
                # the records the pairs need are picked where their chunks are: chunks never travel
                mine = self.client.submit(pick, later, np.unique(piece // n), pure=False)
                theirs = self.client.submit(pick, earlier, np.unique(piece % n), pure=False)
                tasks.append(self.client.submit(verify_pairs, piece, mine, theirs, n, config, pure=False))
        self.logger.info(
            "near-duplicate search on Dask: %d records in %d chunks, %d candidate pairs, %d verify tasks",
            n, len(chunks), len(codes), len(tasks),
        )  # fmt: skip
        found = self.client.gather(tasks)
        del chunks, tasks
        codes = np.concatenate([np.empty(0, dtype=np.int64), *(c for c, _ in found)])
        sims = np.concatenate([np.empty(0), *(s for _, s in found)])
        order = np.argsort(codes, kind="stable")
        return codes[order], sims[order]

    def _candidates(self, chunks: list, n: int, config, parts: int) -> np.ndarray:
        """Every candidate pair (low-byte floor only), a wave of bands at a time."""
        per_wave = max(1, min(config.bands, ROWS_IN_FLIGHT // n))
        found = [np.empty(0, dtype=np.int64)]
        for first in range(0, config.bands, per_wave):
            bands = range(first, min(first + per_wave, config.bands))
            rows = self.client.map(band_rows, chunks, bands=bands, parts=parts, config=config, pure=False)
            parted = [[self.client.submit(getitem, r, p, pure=False) for r in rows] for p in range(parts)]
            buckets = [self.client.submit(bucket_candidates, part, n, config, pure=False) for part in parted]
            found += self.client.gather(buckets)
        return np.unique(np.concatenate(found))
