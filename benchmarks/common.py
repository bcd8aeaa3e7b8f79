"""Shared helpers for the benchmarks: where ../shared is, and reading the seed abstracts."""

from __future__ import annotations

import contextlib
import json
import resource
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SEEDS = SHARED / "seeds"
OUT = ROOT / "benchmarks" / "results"


def seed_files() -> list[tuple[str, list[str]]]:
    """(header, paragraphs) of every seed file, read at run time."""
    out = []
    for path in sorted(SEEDS.iterdir()):
        if path.is_file():
            header, *paras = [p.strip() for p in path.read_text("utf-8").split("\n\n") if p.strip()]
            out.append((header, paras))
    return out


def peak_rss_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def save(name: str, result: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=2, ensure_ascii=False))


@contextlib.contextmanager
def dask_cluster(workers: int, log: Path):
    """A `dask scheduler` and ``workers`` `dask worker` processes (one thread each), each started apart as
    a user's cluster is: yields (the scheduler's address, the processes)."""
    import os
    import signal
    import subprocess
    import sys

    from distributed import Client

    from flows.server import free_port

    dask = str(Path(sys.executable).with_name("dask"))
    address = f"tcp://127.0.0.1:{free_port()}"
    commands = [
        [dask, "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard"],
        *[[dask, "worker", address, "--nthreads", "1", "--no-dashboard"]] * workers,
    ]
    with log.open("w") as out:
        procs = [subprocess.Popen(c, stdout=out, stderr=out, start_new_session=True) for c in commands]
    try:
        with Client(address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=120)
        yield address, procs
    finally:
        for proc in reversed(procs):
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=60)
