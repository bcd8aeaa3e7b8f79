"""What a per-file batch costs besides its work on a 2-worker local Dask cluster: as a Prefect task
(prefect-dask's task runner: Prefect's context serialised per task, rebuilt in the worker, a client
opened there, the task run's events) against a plain Dask task on the same cluster (what the flow
submits since ef8d45f, ``flows/hygiene.py::_submit``).

``--batches`` batches of one small generated file each (no ../shared needed), a few rounds of each
kind; the figures are the wall time and the CPU seconds of this process, its workers and the Prefect
server it starts (one, on loopback, as the CLI's, unless PREFECT_API_URL names one).

    .venv/bin/python -m benchmarks.bench_task_cost [--batches 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import psutil
from prefect import flow, unmapped

from benchmarks.common import save

ABSTRACT = (
    "We introduce model number {i}, which tells the language of scientific abstracts, and we evaluate "
    "it on three corpora of conference papers."
)


def _cpu(processes: list[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        try:
            total += sum(process.cpu_times()[:2])
        except psutil.Error:
            pass
    return total


@flow(name="bench-task-cost")
def rounds(folder: str, kind: str, n_rounds: int, server_pid: int | None) -> list[dict]:
    from corpus_hygiene.checks import load_policy
    from corpus_hygiene.flows import hygiene
    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline.process import process_files

    policy = load_policy()
    groups = [[src] for src in discover(folder, 1 << 30).files]
    me = psutil.Process()
    extra = [psutil.Process(server_pid)] if server_pid else []
    out = []
    for _ in range(n_rounds):
        processes = [me, *me.children(recursive=True), *extra]
        cpu, start = _cpu(processes), time.perf_counter()
        if kind == "prefect":
            labels = [g[0].rel_path for g in groups]
            futures = hygiene.process_files_task.map(
                groups, policy=unmapped(policy), cache_dir=unmapped(None), label=labels
            )
            results = [f.result() for f in futures]
        else:
            client = hygiene._dask_client()
            results = client.gather(client.map(process_files, groups, policy=policy, cache=None, pure=False))
        wall = time.perf_counter() - start
        time.sleep(1.5)  # the task runs' events reach the server, and its CPU is counted
        assert len(results) == len(groups)
        out.append({"wall_seconds": round(wall, 2), "cpu_seconds": round(_cpu(processes) - cpu, 2)})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from prefect.settings import PREFECT_API_URL, temporary_settings

    from corpus_hygiene.settings import apply_prefect_defaults

    apply_prefect_defaults()
    server = server_pid = None
    if not os.environ.get("PREFECT_API_URL"):
        from corpus_hygiene.local_server import TemporaryServer, free_port

        server = TemporaryServer(free_port())
        # in the environment before the workers are forked (they use it too), and in this process's
        # settings, which Prefect fixed when it was imported
        os.environ["PREFECT_API_URL"] = server.start()
        server_pid = server.process.pid
    from benchmarks import bench_task_cost  # the flow by its module's name: Prefect pickles it by reference
    from corpus_hygiene.cluster import local_cluster
    from corpus_hygiene.flows.hygiene import with_task_runner

    result: dict = {"batches": args.batches, "rounds": args.rounds}
    cluster = None
    try:
        with tempfile.TemporaryDirectory() as folder:
            for i in range(args.batches):
                text = f"ICLR 2026 Papers\n\n{ABSTRACT.format(i=i)}\n"
                (Path(folder) / f"f{i:04d}.txt").write_text(text, "utf-8")
            cluster = local_cluster(2)
            with temporary_settings(updates={PREFECT_API_URL: os.environ["PREFECT_API_URL"]}):
                for kind in ("prefect", "dask"):
                    runner = with_task_runner(bench_task_cost.rounds, address=cluster.scheduler_address)
                    result[kind] = runner(folder, kind, args.rounds, server_pid)
    finally:
        if cluster is not None:
            cluster.close()
        if server is not None:
            server.stop()
    save("task_cost", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
