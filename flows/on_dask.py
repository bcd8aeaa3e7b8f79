"""The per-file work on Dask, through prefect-dask: ``--workers N`` makes a local cluster, and
``--dask-address`` uses a running scheduler. The ``DaskTaskRunner`` is entered for the per-file stage
only, so a local cluster's workers' memory is free for the global steps after it. Batches are plain
Dask tasks submitted through the runner's own client (``DaskTaskRunner.client``): the workers run no
Prefect code and need no Prefect API."""

from __future__ import annotations

import logging
import time

from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.logging import get_run_logger

from corpus_hygiene.incremental.file_cache import FileCache
from corpus_hygiene.pipeline.batches import batches
from corpus_hygiene.pipeline.process import process_files

# Below this much new input a local cluster's start (seconds of worker imports) costs more than the work
# it would share: the files are processed in the flow's process.
CLUSTER_MIN_BYTES = 4 << 20
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


def use_dask(todo: list, workers: int, dask_address: str | None) -> bool:
    """Whether the files ``todo`` go to Dask: always given an address, else with workers and enough input."""
    if not todo:
        return False
    return bool(dask_address) or (workers > 1 and sum(f.size for f in todo) >= CLUSTER_MIN_BYTES)


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
    """The Dask cluster went away during the per-file stage (nothing is published)."""


def process_on_dask(
    files: list, policy, cache: FileCache | None, workers: int, dask_address: str | None
) -> list:
    """The results of ``files``, in order; progress logged as batches finish. The runner is entered here,
    not given to a subflow: a subflow's parameters (the file list) go to Prefect's API, which limits
    their size."""
    from distributed import as_completed
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    try:
        with task_runner(workers, dask_address) as runner:
            client = runner.client
            threads = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()) or 1
            groups = batches(files, threads, min_bytes=MIN_DASK_BATCH_BYTES)
            futures = client.map(process_files, groups, policy=policy, cache=cache, pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            results: list[list] = [[] for _ in futures]
            progress = Progress(get_run_logger(), len(files))
            for future in as_completed(futures, loop=client.loop):
                results[index[future.key]] = batch = future.result()
                progress.add(batch)
    except (FutureCancelledError, CommClosedError) as exc:
        where = dask_address or f"the local cluster of {workers} workers"
        why = getattr(exc, "reason", None) or type(exc).__name__
        raise ClusterLost(f"lost the Dask cluster at {where} ({why}); re-run when it is back") from exc
    return [r for batch in results for r in batch]
