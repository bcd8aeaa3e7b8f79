"""What an ad-hoc run's fixed CPU consists of: `hygiene run` on one small file (a fresh dataset folder,
Prefect's server started as the run's child), its CPU by process, and the pieces of the flow process's
share measured alone in fresh processes: the imports, one language's word data (read from the user's
cache; and built there, as on a machine's first run). Beside them, the two figures
``flows/on_dask.cluster_pays`` decides with: the per-file stage's seconds a MB of bench input in one
warm process, and a local cluster's wall from start to close with every worker warm (word data loaded).

    python -m benchmarks.bench_fixed      → benchmarks/results/fixed.json
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from benchmarks.bench_e2e import _role, _sample_tree, build
from checks import load_policy
from corpus_hygiene.ingest import discover
from corpus_hygiene.pipeline.process import process_files
from flows.on_dask import dask_client

RESULTS = Path(__file__).with_name("results") / "fixed.json"
ONE_FILE = "ICLR 2026 Papers\n\n" + "\n\n".join(
    f"We study problem {i} and show that a simple method solves it on three benchmarks." for i in range(20)
)
WORD_DATA = "import + English word data"
PIECES = {
    "python": "pass",
    "import corpus_hygiene.cli": "import corpus_hygiene.cli",
    "import flows.hygiene (Prefect, pandera, pyarrow)": "import flows.hygiene",
    WORD_DATA: (
        "import flows.hygiene\nfrom corpus_hygiene.language.detect import detect_language\n"
        "detect_language('We study a problem and show that it is easy.')"
    ),
}


def cpu_of(code: str, cold: bool = False) -> float:
    """User + system CPU seconds of a fresh Python process running ``code``, best of three; ``cold``:
    with an empty cache folder (``wordlists.trie_folder``), as on a machine's first run."""
    best = float("inf")
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with tempfile.TemporaryDirectory() as empty:
            env = os.environ | {"XDG_CACHE_HOME": empty} if cold else None
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return round(best, 2)


def one_run(folder: Path) -> dict:
    (folder / "in").mkdir()
    (folder / "in" / "a.txt").write_text(ONE_FILE, "utf-8")
    cmd = [str(Path(sys.executable).with_name("hygiene")), "run", str(folder / "in"), "--no-cache",
           "--dataset-dir", str(folder / "clean"), "--reports-dir", str(folder / "reports")]  # fmt: skip
    start = time.perf_counter()
    popen = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree, cpu, peaks, cmdlines = psutil.Process(popen.pid), {}, {}, {}
    while popen.poll() is None:
        _sample_tree(tree, cpu, peaks)
        for pid in peaks.keys() - cmdlines.keys():
            with contextlib.suppress(psutil.Error):
                cmdlines[pid] = " ".join(psutil.Process(pid).cmdline())
        time.sleep(0.05)
    by_role: dict[str, float] = {}
    for pid, (user, system) in cpu.items():
        role = _role(pid, popen.pid, cmdlines)
        by_role[role] = round(by_role.get(role, 0.0) + user + system, 2)
    return {"wall_seconds": round(time.perf_counter() - start, 2), "cpu_seconds_by_process": by_role}


def _process(files: list) -> int:
    return len(process_files(files, load_policy(None)))


def stage_seconds_per_mb(folder: Path) -> float:
    """The per-file stage on bench files in one process, after a first file has loaded its word data."""
    build(folder, 5000, 1, "f")
    files = discover(folder, 1 << 30).files
    _process(files[:4])
    rest = files[4:]
    start = time.process_time()
    _process(rest)
    return round((time.process_time() - start) / (sum(f.size for f in rest) / 2**20), 2)


def cluster_start(folder: Path, workers: int = 2) -> dict:
    """A local cluster of ``workers`` (``flows/on_dask``'s settings) from start to close, each worker
    having processed one bench file: what the per-file stage pays on top of its work to use one."""
    files = discover(folder, 1 << 30).files[:workers]
    start = time.perf_counter()
    with dask_client(workers, None) as client:
        client.gather(client.map(_process, [[f] for f in files], pure=False))
    return {"workers": workers, "wall_seconds": round(time.perf_counter() - start, 2)}


def main() -> None:
    pieces = {name: cpu_of(code) for name, code in PIECES.items()}
    pieces["import + English word data, first run on the machine"] = cpu_of(PIECES[WORD_DATA], cold=True)
    with tempfile.TemporaryDirectory() as tmp:
        run = one_run(Path(tmp))
        (Path(tmp) / "bench").mkdir()
        per_mb = stage_seconds_per_mb(Path(tmp) / "bench")
        cluster = cluster_start(Path(tmp) / "bench")
    result = {
        "one_small_file": run,
        "flow_process_pieces_cpu_seconds": pieces,
        "per_file_stage_seconds_per_mb": per_mb,
        "local_cluster_start_to_close": cluster,
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
