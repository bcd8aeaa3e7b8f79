"""End to end through the real `hygiene run` (Prefect flow): a full run, an unchanged re-run, and a run
with 1% new files, on a synthetic corpus built from the real abstracts in ../shared/corpora.

Corpus: N new abstracts (bench_dedup_scale.Maker) in files of 50 under a venue/year header (7 languages),
with planted defects:
5% exact copies (case/whitespace changed), 5% near copies (a few words changed), 3% mojibake, 5% LaTeX
markup, 2% junk records. Reports wall time, abstracts/s, per-stage seconds and peak RSS of each run.

    .venv/bin/python -m benchmarks.bench_e2e [--abstracts 100000] [--workers 1] [--server]

``--server`` runs all three against one long-lived Prefect server (``prefect server start``, its own
PREFECT_HOME in the temporary folder), as runs scheduled by ``hygiene serve`` or a deployment do;
without it the runs go as a bare ``hygiene run`` does: the full run starts Prefect's server (a server
kept from earlier runs is stopped first) and keeps it, the re-runs use it (each run's ``server`` says
which), and it is stopped at the end; with ``HYGIENE_SERVER_IDLE_MINUTES=0`` each run starts its own.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from benchmarks.bench_dedup_scale import Maker
from benchmarks.common import save
from benchmarks.corpora import load_pools
from corpus_hygiene.checks import DEFAULT_POLICY_PATH
from corpus_hygiene.flows.server import free_port

PER_FILE = 50
HEADERS = {
    "en": "ICLR {y} Papers",
    "zh": "ICLR {y} 论文列表",
    "ja": "NeurIPS {y} 論文一覧",
    "fr": "Liste des articles TALN {y}",
    "es": "Artículos ACL {y}",
    "pt": "Artigos EMNLP {y}",
    "de": "Beiträge KONVENS {y}",
}


def _variant(text: str, lang: str, rng: random.Random, maker: Maker, earlier: list[tuple[str, str]]) -> str:
    r = rng.random()
    if r < 0.05 and earlier:
        text = rng.choice(earlier)[1]
        return text.upper() if rng.random() < 0.5 else "  " + text.replace(" ", "  ")
    if r < 0.10 and earlier:
        lang_, text = rng.choice(earlier)
        return maker.near_copy(text, lang_, rng, 0.05) if lang_ == lang else text
    if r < 0.13:
        return "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in text.encode("utf-8"))
    if r < 0.18:
        words = text.split(" ")
        i = rng.randrange(len(words))
        words[i] = rf"\textbf{{{words[i]}}} with $\alpha^{{2}}$"
        return " ".join(words)
    if r < 0.20:
        return rng.choice(["TBA", "Abstract to appear.", "* * *", "test " * 30])
    return text


def build(folder: Path, n: int, seed: int, prefix: str) -> int:
    """Files of 50 abstracts of one language; every abstract is new (``Maker``) except the planted copies."""
    rng = random.Random(seed)
    maker = Maker(load_pools())
    earlier: list[tuple[str, str]] = []  # (lang, text) of a sample of earlier abstracts, for the copies
    written, f = 0, 0
    while written < n:
        lang = maker.language(rng)
        body = []
        for _ in range(min(PER_FILE, n - written)):
            text = maker.abstract(lang, rng)
            body.append(_variant(text, lang, rng, maker, earlier))
            if len(earlier) < 5000:
                earlier.append((lang, text))
            elif rng.random() < 0.05:
                earlier[rng.randrange(5000)] = (lang, text)
        header = HEADERS[lang].format(y=2020 + f % 6)
        (folder / f"{prefix}{f:05d}.txt").write_text(header + "\n\n" + "\n\n".join(body) + "\n", "utf-8")
        written += len(body)
        f += 1
    return f


@contextlib.contextmanager
def prefect_server(home: Path):
    """A long-lived Prefect server on loopback for the runs (PREFECT_API_URL in this environment)."""
    import httpx

    port = free_port()
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    log = (home.parent / "server.log").open("wb")
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("prefect")), "server", "start", "--host", "127.0.0.1",
         "--port", str(port)],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/api"
    try:
        for _ in range(240):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            time.sleep(0.5)
        else:
            raise SystemExit("the Prefect server did not start in 120 s")
        os.environ["PREFECT_API_URL"] = url
        yield url
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        proc.terminate()
        proc.wait(30)
        log.close()


def stop_kept_server() -> None:
    hygiene = str(Path(sys.executable).with_name("hygiene"))
    subprocess.run([hygiene, "server", "stop"], check=True, capture_output=True, timeout=60)


def _sample_tree(proc: psutil.Process, cpu: dict[int, tuple[float, float]]) -> int:
    """Resident bytes of a process and all its descendants (Prefect's server, Dask workers) now; each
    one's CPU seconds so far (user, system) go to ``cpu``, by pid."""
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
            times = p.cpu_times()
            cpu[p.pid] = (times.user, times.system)
    return total


def _tree_pss(proc: psutil.Process) -> int:
    """The same tree's proportional set size: a page shared by n processes counts 1/n in each. Local
    Dask workers are forked from the warm CLI and share most of its memory at first, which the sum of
    RSS counts once per process. Slow to read: the kernel walks the page tables (98 ms for an
    8.6 GB process, 0.02 ms for its RSS), so it is read at most 1% of the time (see ``run``)."""
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += p.memory_full_info().pss
    return total


def _in_use() -> int:
    """The machine's memory in use (total - available: what it could not hand to a new process; the
    page cache of written files not included). Its growth during a run counts a page shared by
    forked processes once, whatever the RSS of each says."""
    memory = psutil.virtual_memory()
    return memory.total - memory.available


def run(input_dir: Path, out: Path, workers: int, policy: Path, extra: tuple[str, ...] = ()) -> dict:
    """``extra``: more arguments of ``hygiene run``."""
    start = time.perf_counter()
    cmd = [
        str(Path(sys.executable).with_name("hygiene")),
        "run",
        str(input_dir),
        "--dataset-dir",
        str(out / "clean"),
        "--reports-dir",
        str(out / "reports"),
        "--workers",
        str(workers),
        "--policy",
        str(policy),
        *extra,
    ]
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        before = _in_use()
        popen = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, text=True)
        tree, peak_tree, peak_pss, next_pss, peak_in_use = psutil.Process(popen.pid), 0, 0, 0.0, before
        cpu: dict[int, tuple[float, float]] = {}
        while popen.poll() is None:  # sums over the process tree: RSS every 0.2 s, PSS see _tree_pss
            peak_tree = max(peak_tree, _sample_tree(tree, cpu))
            peak_in_use = max(peak_in_use, _in_use())
            if time.perf_counter() >= next_pss:  # next read after 100x the time this one took
                began = time.perf_counter()
                peak_pss = max(peak_pss, _tree_pss(tree))
                next_pss = time.perf_counter() + max(1.0, 100 * (time.perf_counter() - began))
            time.sleep(0.2)
        stdout.seek(0), stderr.seek(0)
        proc = subprocess.CompletedProcess(cmd, popen.returncode, stdout.read(), stderr.read())
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    server = (
        "long-lived (PREFECT_API_URL)"
        if os.environ.get("PREFECT_API_URL")
        else "kept from an earlier run"
        if "on Prefect's server kept from an earlier run" in proc.stderr
        else "started by this run"
    )
    peak = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    # CPU of every process of the run as last seen (at most 0.2 s before each one ended). The system
    # part includes the page faults of the memory the processes grow into, which on this VM cost ~6 ms
    # a MB when the host had taken that memory back (docs/scaling.md, "Fresh memory").
    cpu_seconds = {
        "user": round(sum(u for u, _ in cpu.values()), 1),
        "system": round(sum(s for _, s in cpu.values()), 1),
        # the CLI's own process (the flow, and with one worker the per-file work); the rest of the
        # tree is its children (Dask workers, forked processes, a server it started)
        "cli_process": round(sum(cpu.get(popen.pid, (0.0, 0.0))), 1),
    }
    if proc.stdout.startswith("unchanged:"):  # the published dataset is current: nothing ran
        return {
            "wall_seconds": round(wall, 1),
            "server": server,
            "outcome": proc.stdout.splitlines()[0],
            "peak_rss_mb_children": peak,
            "peak_rss_mb_process_tree": round(peak_tree / 2**20),
            "peak_pss_mb_process_tree": round(peak_pss / 2**20),
            "peak_in_use_mb_machine": round((peak_in_use - before) / 2**20),
            "cpu_seconds_process_tree": cpu_seconds,
        }
    run_id = proc.stdout.split()[1].rstrip(":")
    metrics = json.loads((out / "reports" / f"{run_id}.metrics.json").read_text())
    return {
        "wall_seconds": round(wall, 1),
        "server": server,  # a kept server is not this run's child: its memory and CPU are not counted
        "counts": metrics["counts"],
        "stage_seconds": metrics["stage_seconds"],
        "files_from_cache": metrics["files_from_cache"],
        "peak_rss_mb_children": peak,  # the largest single process of all runs so far
        "peak_rss_mb_process_tree": round(peak_tree / 2**20),  # all processes of this run together
        "peak_pss_mb_process_tree": round(peak_pss / 2**20),  # the same, shared pages counted once
        # the machine's memory in use above what it was before the run: every process, sampled as RSS
        "peak_in_use_mb_machine": round((peak_in_use - before) / 2**20),
        "cpu_seconds_process_tree": cpu_seconds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--abstracts", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--server", action="store_true", help="one long-lived Prefect server for the runs")
    parser.add_argument(
        "--keep",
        type=Path,
        help="build and run in this (new) folder and leave it: the corpus, the last run's outputs, and a "
        "copy of the full run's in out_full (to profile a re-run on it later)",
    )
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True)  # an error if it exists: nothing of another run is mixed in
    with contextlib.ExitStack() as stack:
        tmp = str(args.keep) if args.keep else stack.enter_context(tempfile.TemporaryDirectory())
        corpus, out = Path(tmp) / "corpus", Path(tmp) / "out"
        corpus.mkdir()
        if args.server:
            (Path(tmp) / "prefect").mkdir()
            stack.enter_context(prefect_server(Path(tmp) / "prefect"))
        else:  # the full run starts the server (none kept from before), and none is left behind
            stop_kept_server()
            stack.callback(stop_kept_server)
        policy = DEFAULT_POLICY_PATH
        files = build(corpus, args.abstracts, 1, "f")
        full = run(corpus, out, args.workers, policy)
        print(json.dumps({"full": full}), flush=True)  # kept even if a later run fails
        if args.keep:
            shutil.copytree(out, Path(tmp) / "out_full", symlinks=True)
        again = run(corpus, out, args.workers, policy)
        build(corpus, max(1, args.abstracts // 100), 2, "new")
        new = run(corpus, out, args.workers, policy)
    n = args.abstracts
    save(
        f"e2e_{n}_w{args.workers}" + ("_server" if args.server else ""),
        {
            "abstracts": n,
            "files": files,
            "workers": args.workers,
            "prefect": "long-lived server"
            if args.server
            else "started by the full run, kept for the re-runs"
            if idle_seconds()
            else "temporary server per run",
            "full": {**full, "abstracts_per_s": round(n / full["wall_seconds"])},
            "unchanged_rerun": {
                **again,
                "share_of_full": round(again["wall_seconds"] / full["wall_seconds"], 3),
            },
            "one_percent_new": {**new, "share_of_full": round(new["wall_seconds"] / full["wall_seconds"], 3)},
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
