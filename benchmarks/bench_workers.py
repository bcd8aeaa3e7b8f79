"""`--workers 2` against one worker: full runs of the real `hygiene run` on the synthetic corpus of
bench_e2e (``--no-cache``), two workers and one alternating, on one long-lived Prefect server.

The issue's target is a ratio of two wall times on a machine whose speed drifts (one-worker runs of
the 100k corpus took 78-100 s within an hour, and consecutive two-worker runs 49.6-60.5 s): the runs
alternate so that each pair sees the same machine, and every pair is reported, not only a mean. Each
pair also reports the CPU seconds of the same work in the two workers and in the one-worker process
(the workers' took 78.4-100.5 CPU s in consecutive runs of the same code while one worker's stayed
within a few seconds: the machine, not the code, made the difference), and every run the checksums of
its Parquet files, which must be the same for every run ("with identical output").

Before each run, a probe of the machine itself (``two_core_scaling``): the per-file code on the corpus's
first files, without Prefect or Dask, in one process alone and then in two at once; its ratio is what
two cores gave this work at that moment (a snapshot of a few seconds: the machine's speed moves within
seconds, docs/scaling.md).

    .venv/bin/python -m benchmarks.bench_workers [--abstracts 100000] [--pairs 3]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.bench_e2e import build, prefect_server
from benchmarks.bench_e2e import run as run_cli
from benchmarks.common import save
from corpus_hygiene.checks import DEFAULT_POLICY_PATH, load_policy
from corpus_hygiene.cluster import warm_up
from corpus_hygiene.ingest import discover
from corpus_hygiene.models import SourceFile
from corpus_hygiene.pipeline.process import process_files

PROBE_BYTES = 2 << 20  # the probe's work: the corpus's first files up to this size (~2 s on one core)
_START = None  # the forked probes' barrier: the two start their work together


def _probe(sources: list[SourceFile]) -> float:
    """In a forked child: the seconds ``process_files`` takes over ``sources`` (after the barrier)."""
    if _START is not None:
        _START.wait(timeout=120)  # BrokenBarrierError, not a hang, if the other process never comes
    start = time.perf_counter()
    process_files(sources, load_policy())
    return time.perf_counter() - start


def two_core_scaling(sources: list[SourceFile]) -> float:
    """How much work two cores do now against one: ``sources`` processed by one forked process alone,
    then by two at once (each all of them); 2 × alone / together (2.0: two cores give twice the work
    of one). Forked from this process, warmed up (``warm_up``): no Prefect, no Dask, no pickling of
    results. What this adds to timing the runs: the machine's share of a pair's speedup, measured."""
    global _START
    fork = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, mp_context=fork) as pool:
        alone = pool.submit(_probe, sources).result()
    _START = fork.Barrier(2)
    try:
        with ProcessPoolExecutor(2, mp_context=fork) as pool:
            together = max(f.result() for f in [pool.submit(_probe, sources) for _ in range(2)])
    finally:
        _START = None
    return round(2 * alone / together, 3)


def probe_sources(corpus: Path) -> list[SourceFile]:
    """The corpus's first files, up to ``PROBE_BYTES``: the probe's work."""
    chosen, size = [], 0
    for src in discover(str(corpus), load_policy().max_file_bytes).files:
        if size >= PROBE_BYTES:
            break
        chosen.append(src)
        size += src.size
    return chosen


def one_run(corpus: Path, out: Path, workers: int) -> dict:
    """A full run into a new ``out`` (``--no-cache``: every file processed), its figures and checksums."""
    shutil.rmtree(out, ignore_errors=True)
    result = run_cli(corpus, out, workers, DEFAULT_POLICY_PATH, ("--no-cache",))
    manifest = json.loads((out / "clean" / "manifest.json").read_text())
    cpu = result["cpu_seconds_process_tree"]
    return {
        "workers": workers,
        "wall_seconds": result["wall_seconds"],
        "stage_seconds": result["stage_seconds"],
        "cpu_seconds_cli_process": cpu["cli_process"],
        "cpu_seconds_children": round(cpu["user"] + cpu["system"] - cpu["cli_process"], 1),
        "checksums": {k: v["sha256"] for k, v in manifest["outputs"].items() if k.endswith(".parquet")},
    }


def pair_figures(two: dict, one: dict, scaling: dict[int, float]) -> dict:
    """One pair's ratios: the whole run's wall time, and the per-file stage's alone (which flatters two
    workers a little: one worker warms up in its first batch, two are warmed up before the flow)."""
    stage = "process_files"
    return {
        "wall_seconds": {"two_workers": two["wall_seconds"], "one_worker": one["wall_seconds"]},
        "speedup": round(one["wall_seconds"] / two["wall_seconds"], 3),
        "per_file_stage_speedup": round(one["stage_seconds"][stage] / two["stage_seconds"][stage], 3),
        # what is not the per-file stage: start, global steps, exit; for two workers also the gates'
        # warm-up, which the flow makes before it starts the stage's timer, the workers already at work
        "serial_seconds": {
            "two_workers": round(two["wall_seconds"] - two["stage_seconds"][stage], 1),
            "one_worker": round(one["wall_seconds"] - one["stage_seconds"][stage], 1),
        },
        # the same work's CPU: the two workers' together, and the one-worker run's process (its start
        # and global steps included); the workers' varies with the machine far more than one's does
        "workers_cpu_seconds": two["cpu_seconds_children"],
        "one_worker_cpu_seconds": one["cpu_seconds_cli_process"],
        # the machine's two-core scaling of the same work, probed just before each of the pair's runs
        "machine_two_core_scaling": {
            "before_two_workers": scaling[2],
            "before_one_worker": scaling[1],
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--abstracts", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus, out = Path(tmp) / "corpus", Path(tmp) / "out"
        corpus.mkdir()
        (Path(tmp) / "prefect").mkdir()
        files = build(corpus, args.abstracts, 1, "f")
        probe = probe_sources(corpus)
        warm_up()  # once here: the probes are forked warm
        runs, pairs = [], []
        with prefect_server(Path(tmp) / "prefect"):
            for i in range(args.pairs):
                # two workers first in even pairs, one first in odd ones: a drift in either direction
                # favours neither
                order = (2, 1) if i % 2 == 0 else (1, 2)
                pair, scaling = {}, {}
                for w in order:
                    scaling[w] = two_core_scaling(probe)
                    pair[w] = one_run(corpus, out, w)
                pairs.append(pair_figures(pair[2], pair[1], scaling))
                print(json.dumps(pairs[-1]), flush=True)
                runs += pair.values()
    speedups = [p["speedup"] for p in pairs]
    identical = len({json.dumps(r["checksums"], sort_keys=True) for r in runs}) == 1
    save(
        f"workers_{args.abstracts}",
        {
            "abstracts": args.abstracts,
            "files": files,
            "prefect": "long-lived server",
            "pairs": pairs,
            "speedup_median": round(statistics.median(speedups), 3),
            "speedup_min": min(speedups),
            "machine_two_core_scaling_median": statistics.median(
                x for p in pairs for x in p["machine_two_core_scaling"].values()
            ),
            "speedup_of_totals": round(
                sum(r["wall_seconds"] for r in runs if r["workers"] == 1)
                / sum(r["wall_seconds"] for r in runs if r["workers"] == 2),
                3,
            ),
            "identical_output": identical,
            "checksums": runs[0]["checksums"],
        },
    )
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
