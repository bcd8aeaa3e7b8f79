"""Ingestion throughput: the seed files repeated to ~50 MB, through every per-file stage.

Reads ../shared/seeds at run time (nothing copied into the project). Each copy of a seed file gets a
copy number appended to every paragraph so copies are distinct records, not exact duplicates.
Reports records/s and MB/s per stage (one process, one core), the assemble and publish times, and
peak memory (max RSS). Results go to benchmarks/results/ingest.json.

    .venv/bin/python -m benchmarks.bench_ingest [--mb 50]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import SEEDS, peak_rss_mb, save
from checks import load_policy
from corpus_hygiene.clean import clean_text
from corpus_hygiene.dedup.keys import dedup_key
from corpus_hygiene.ingest import (
    decode_bytes,
    discover,
    first_nonblank,
    iter_paragraphs,
    parse_header,
    split_lines,
)
from corpus_hygiene.ingest.discover import read_bytes
from corpus_hygiene.language.detect import detect_language
from corpus_hygiene.pipeline.assemble import assemble
from corpus_hygiene.pipeline.process import process_file
from corpus_hygiene.publish.dataset import publish


def build_corpus(folder: Path, target_bytes: int) -> int:
    seeds = [p.read_text("utf-8") for p in sorted(SEEDS.iterdir()) if p.is_file()]
    written = copy = 0
    while written < target_bytes:
        for i, text in enumerate(seeds):
            header, *paras = [p for p in text.split("\n\n") if p.strip()]
            body = "\n\n".join(f"{p.strip()} (copy {copy})" for p in paras)
            data = f"{header}\n\n{body}\n".encode()
            (folder / f"{copy:05d}_{i}.txt").write_bytes(data)
            written += len(data)
        copy += 1
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=50.0, help="corpus size in MB (default 50)")
    args = parser.parse_args()
    if not SEEDS.is_dir():
        print(f"benchmark needs {SEEDS}", file=sys.stderr)
        return 2
    policy = load_policy()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        size = build_corpus(corpus, int(args.mb * 1024 * 1024))
        files = discover(corpus, policy.max_file_bytes).files

        # Per-stage breakdown (the same calls process_file makes, timed one by one).
        stage = dict.fromkeys(["read", "decode", "split_header", "clean", "language", "dedup_key"], 0.0)
        n_records = 0
        for src in files:
            t0 = time.perf_counter()
            data = read_bytes(src, policy.max_file_bytes)
            t1 = time.perf_counter()
            text = decode_bytes(data).text
            t2 = time.perf_counter()
            lines = split_lines(text)
            first = first_nonblank(lines)
            parse_header(lines[first], first + 1)
            paras = list(iter_paragraphs(lines, first + 1))
            t3 = time.perf_counter()
            cleaned = [clean_text(p.text).text for p in paras]
            t4 = time.perf_counter()
            for c in cleaned:
                detect_language(c)
            t5 = time.perf_counter()
            for c in cleaned:
                dedup_key(c)
            t6 = time.perf_counter()
            for key, a, b in zip(stage, (t0, t1, t2, t3, t4, t5), (t1, t2, t3, t4, t5, t6), strict=True):
                stage[key] += b - a
            n_records += len(paras)

        # The real per-file function end to end, then the global steps.
        t0 = time.perf_counter()
        results = [process_file(src, policy) for src in files]
        t_process = time.perf_counter() - t0
        t0 = time.perf_counter()
        asm = assemble(results, [], [])
        t_assemble = time.perf_counter() - t0
        t0 = time.perf_counter()
        tables = {"records": asm.records, "duplicates": asm.duplicates, "quarantine": asm.quarantine}
        publish(Path(tmp) / "clean", "bench", tables, {})
        t_publish = time.perf_counter() - t0

    result = {
        "corpus_mb": round(size / 1e6, 1),
        "files": len(files),
        "records": n_records,
        "stage_seconds": {k: round(v, 2) for k, v in stage.items()},
        "stage_records_per_s": {k: round(n_records / v) for k, v in stage.items() if v > 0},
        "process_file_seconds": round(t_process, 2),
        "process_file_records_per_s": round(n_records / t_process),
        "process_file_mb_per_s": round(size / 1e6 / t_process, 2),
        "assemble_seconds": round(t_assemble, 2),
        "publish_seconds": round(t_publish, 2),
        "peak_rss_mb": peak_rss_mb(),
    }
    save("ingest", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
