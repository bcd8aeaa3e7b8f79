"""End to end through the real `hygiene run` (Prefect flow): a full run, an unchanged re-run, and a run
with 1% new files, on a synthetic corpus built from the real abstracts in ../shared/corpora; and the
fixed start-up cost of a run (one small file).

Corpus: N new abstracts (bench_dedup_scale.Maker) in files of 50 under a venue/year header (7 languages),
with planted defects:
5% exact copies (case/whitespace changed), 5% near copies (a few words changed), 3% mojibake, 5% LaTeX
markup, 2% junk records. Reports wall time, abstracts/s, per-stage seconds, peak RSS and CPU of each
run's process tree.

    .venv/bin/python -m benchmarks.bench_e2e [--abstracts 100000] [--workers 1] [--server] [--cluster]

``--server``: every run against one long-lived `prefect server start` (what scheduled runs use);
without it, each run is an ad-hoc `hygiene run` on Prefect's ephemeral server. ``--cluster``: a
`dask scheduler` and ``--workers`` `dask worker` processes started apart, used through ``--dask-address``;
their peaks are reported with the run's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from benchmarks.bench_dedup_scale import Maker
from benchmarks.common import dask_cluster, save
from benchmarks.corpora import load_pools
from checks import DEFAULT_POLICY_PATH
from flows.server import start_prefect_server

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


def _sample_tree(proc: psutil.Process, cpu: dict[int, tuple[float, float]], peaks: dict[int, int]) -> int:
    """Resident bytes of a process and all its descendants (Dask workers, an ephemeral server) now;
    each one's CPU seconds so far (user, system) go to ``cpu``, its peak resident bytes to ``peaks``,
    by pid."""
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            rss = p.memory_info().rss
            total += rss
            peaks[p.pid] = max(peaks.get(p.pid, 0), rss)
            times = p.cpu_times()
            cpu[p.pid] = (times.user, times.system)
    return total


def _role(pid: int, root: int, cmdlines: dict[int, str]) -> str:
    """The flow's own process, a Dask worker (or nanny), Prefect's server, or another helper."""
    cmd = cmdlines.get(pid, "")
    if pid == root:
        return "flow"
    if "prefect" in cmd and "server" in cmd or "uvicorn" in cmd:
        return "server"
    if "dask scheduler" in cmd:
        return "dask_scheduler"
    return "dask_worker" if ("multiprocessing" in cmd or "distributed" in cmd or "dask" in cmd) else "other"


def run(input_dir: Path, out: Path, engine: tuple[str, ...], extra: tuple[str, ...] = (), cluster=()) -> dict:
    """One `hygiene run` (``engine``: ``--workers N`` or ``--dask-address A``; ``extra``: more of its
    arguments), sampled every 0.2 s with the processes of a ``cluster`` it uses."""
    cmd = [str(Path(sys.executable).with_name("hygiene")), "run", str(input_dir),
           "--dataset-dir", str(out / "clean"), "--reports-dir", str(out / "reports"),
           *engine, "--policy", str(DEFAULT_POLICY_PATH), *extra]  # fmt: skip
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        popen = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, text=True)
        tree, peak, cpu, peaks, cmdlines = psutil.Process(popen.pid), 0, {}, {}, {}
        spent: dict[int, tuple[float, float]] = {}  # a cluster's CPU time before the run
        for p in cluster:
            _sample_tree(p, spent, {})
        while popen.poll() is None:
            peak = max(peak, sum(_sample_tree(p, cpu, peaks) for p in [tree, *cluster]))
            for pid in peaks.keys() - cmdlines.keys():
                with contextlib.suppress(psutil.Error):
                    cmdlines[pid] = " ".join(psutil.Process(pid).cmdline())
            time.sleep(0.2)
        wall = time.perf_counter() - start
        stdout.seek(0), stderr.seek(0)
        out_text, err_text = stdout.read(), stderr.read()
    if popen.returncode != 0:
        raise SystemExit(err_text[-2000:])
    by_role: dict[str, int] = {}
    for pid, rss in peaks.items():  # the largest process of each role (a worker's peak is its own)
        role = _role(pid, popen.pid, cmdlines)
        by_role[role] = max(by_role.get(role, 0), round(rss / 2**20))
    result = {
        "wall_seconds": round(wall, 2),
        "peak_rss_mb_process_tree": round(peak / 2**20),
        "peak_rss_mb_by_process": dict(sorted(by_role.items())),
        "cpu_seconds_process_tree": round(sum(map(sum, cpu.values())) - sum(map(sum, spent.values())), 1),
    }
    if out_text.startswith("unchanged:"):  # the published dataset is current: nothing ran
        return {**result, "outcome": out_text.splitlines()[0]}
    run_id = out_text.split()[1].rstrip(":")
    metrics = json.loads((out / "reports" / f"{run_id}.metrics.json").read_text())
    page = out / "reports" / f"{run_id}.html"
    return {
        **result,
        "counts": metrics["counts"],
        "stage_seconds": metrics["stage_seconds"],
        "files_from_cache": metrics["files_from_cache"],
        "report_bytes": page.stat().st_size,
        "report_open_seconds": report_open_seconds(page),
    }


def report_open_seconds(page: Path) -> float | None:
    """Seconds Debian's chromium (headless, through Playwright) takes to load the page from disk, the
    browser already started; None without chromium."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return None
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        start = time.perf_counter()
        tab.goto(page.as_uri(), wait_until="load")
        seconds = time.perf_counter() - start
        browser.close()
    return round(seconds, 2)


def startup_seconds(tmp: Path, engine: tuple[str, ...], cluster=()) -> float:
    """Wall time of a run on one small file: Prefect's (and the CLI's) fixed start-up cost."""
    one = tmp / "one"
    one.mkdir()
    (one / "a.txt").write_text(
        "ICLR 2026 Papers\n\nWe measure the fixed cost of starting one run of the pipeline on a tiny input.\n"
    )
    return run(one, tmp / "one_out", engine, ("--no-cache",), cluster)["wall_seconds"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--abstracts", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--server", action="store_true", help="one long-lived Prefect server for the runs")
    parser.add_argument(
        "--cluster", action="store_true", help="--workers dask workers and a scheduler, by --dask-address"
    )
    parser.add_argument("--keep", type=Path, help="build and run in this (new) folder and leave it there")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True)  # an error if it exists: nothing of another run is mixed in
    with contextlib.ExitStack() as stack:
        tmp = Path(str(args.keep) if args.keep else stack.enter_context(tempfile.TemporaryDirectory()))
        corpus, out = tmp / "corpus", tmp / "out"
        corpus.mkdir()
        if args.server:
            start_prefect_server(tmp / "prefect-server.log", ui=False)  # stops when this process exits
        engine, cluster = ("--workers", str(args.workers)), []
        if args.cluster:
            address, procs = stack.enter_context(dask_cluster(args.workers, tmp / "dask.log"))
            engine, cluster = ("--dask-address", address), [psutil.Process(p.pid) for p in procs]
        startup = startup_seconds(tmp, engine, cluster)
        files = build(corpus, args.abstracts, 1, "f")
        full = run(corpus, out, engine, (), cluster)
        print(json.dumps({"full": full}), flush=True)  # kept even if a later run fails
        again = run(corpus, out, engine, (), cluster)
        build(corpus, max(1, args.abstracts // 100), 2, "new")
        new = run(corpus, out, engine, (), cluster)
        if args.keep:
            shutil.copytree(out, tmp / "out_last", symlinks=True)
    n = args.abstracts

    def share(result: dict) -> float:
        return round(result["wall_seconds"] / full["wall_seconds"], 3)

    save(
        f"e2e_{n}_w{args.workers}{'_cluster' if args.cluster else ''}{'_server' if args.server else ''}",
        {
            "abstracts": n,
            "files": files,
            "workers": args.workers,
            "engine": "dask scheduler + workers (--dask-address)" if args.cluster else "--workers",
            "prefect": "long-lived server (prefect server start)"
            if args.server
            else "ephemeral, one per run",
            "startup_seconds_one_small_file": startup,
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
