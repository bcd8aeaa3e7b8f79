"""One large source file (default 500 MB): streamed in batches versus read whole, time and peak memory.

The file is one header line and new abstracts in 7 languages (bench_dedup_scale.Maker, from the pools
in ../shared/corpora read at run time), repeated until it reaches the size. Each measurement runs in its
own process so that its peak RSS is its own:
- ``stream``: bytes → text → lines → paragraphs through ingest/stream.py (what process_file does with a
  file above the policy's stream_above_mb);
- ``whole``: the same through a whole read (read_bytes, decode_bytes, split_lines), for comparison;
- ``process`` (with --process): the whole per-file stage on the streamed file, cleaning and language
  included; its memory then grows with the records it keeps (they are the stage's output).

With --one-paragraph the file is a header and one paragraph of that size on one line (no newline):
the per-file stage quarantines it as ``oversized_record`` from its length, with bounded memory.

    .venv/bin/python -m benchmarks.bench_stream [--mb 500] [--process] [--one-paragraph]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_dedup_scale import Maker
from benchmarks.common import peak_rss_mb, save
from benchmarks.corpora import load_pools


def build(path: Path, mb: int) -> int:
    rng = random.Random(5)
    maker = Maker(load_pools())
    block = "\n\n".join(maker.abstract(maker.language(rng), rng) for _ in range(5000)).encode("utf-8")
    with path.open("wb") as out:
        out.write(b"ICLR 2026 Papers\n\n")
        written = 0
        while written < mb << 20:
            out.write(block + b"\n\n")
            written += len(block) + 2
    return path.stat().st_size


def build_one_paragraph(path: Path, mb: int) -> int:
    words = " ".join(f"token{i} of an extraction error" for i in range(20000)).encode("utf-8") + b" "
    with path.open("wb") as out:
        out.write(b"ICLR 2026 Papers\n\n")
        written = 0
        while written < mb << 20:
            out.write(words)
            written += len(words)
        out.write(b"\n")
    return path.stat().st_size


def measure(mode: str, path: Path) -> dict:
    from checks import load_policy
    from corpus_hygiene.ingest import decode_bytes, discover, iter_paragraphs, read_bytes, split_lines
    from corpus_hygiene.ingest.discover import open_source
    from corpus_hygiene.ingest.split import paragraphs_from
    from corpus_hygiene.ingest.stream import iter_lines, open_stream
    from corpus_hygiene.pipeline.process import process_file

    policy = load_policy()
    policy = dataclasses.replace(policy, max_file_bytes=1 << 40)
    (src,) = [f for f in discover(path.parent, 1 << 40).files if f.rel_path == path.name]
    base = peak_rss_mb()  # the interpreter and the libraries, before any byte of the file is read
    start = time.perf_counter()
    if mode == "stream":
        with open_source(src) as fd:
            count = sum(1 for _ in paragraphs_from(iter_lines(open_stream(fd).chunks), 0))
    elif mode == "whole":
        count = sum(1 for _ in iter_paragraphs(split_lines(decode_bytes(read_bytes(src, 1 << 40)).text)))
    else:
        result = process_file(src, policy)
        count = len(result.records) + len(result.rejected)
        reasons = sorted({r.reason for r in result.rejected})
    secs = time.perf_counter() - start
    return {
        **({"quarantine_reasons": reasons} if mode == "process" else {}),
        "paragraphs": count,
        "seconds": round(secs, 1),
        "per_s": round(count / secs),
        "peak_rss_mb": peak_rss_mb(),
        "rss_before_mb": base,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=500)
    parser.add_argument("--process", action="store_true", help="also run the whole per-file stage")
    parser.add_argument("--one-paragraph", action="store_true", help="one paragraph of that size, one line")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, Path(args.file))))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.txt"
        size = (build_one_paragraph if args.one_paragraph else build)(path, args.mb)
        result: dict = {"file_mb": round(size / (1 << 20), 1)}
        modes = (
            ("process",)
            if args.one_paragraph
            else ("stream", "whole", *(("process",) if args.process else ()))
        )
        for mode in modes:
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.bench_stream", "--measure", mode, "--file", str(path)],
                capture_output=True,
                text=True,
                check=True,
            )
            result[mode] = json.loads(out.stdout.strip().splitlines()[-1])
    save(f"{'oversized' if args.one_paragraph else 'stream'}_{args.mb}mb", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
