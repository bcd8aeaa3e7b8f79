"""Cleaning throughput per core, and the ratio against the naive pipeline.

Corpora, built from the seed abstracts (../shared/seeds, read at run time) repeated to ~50 MB:
- "mostly clean": the seed abstracts as they are (about a quarter carry some LaTeX or markdown);
- "dirty": the same with 10% turned into mojibake (UTF-8 read as cp1252) and 30% given heavy LaTeX
  (emphasis macros, inline math with super/subscripts, escaped percent signs).
Baseline ("naive"): ``ftfy.fix_text`` then ``LatexNodes2Text().latex_to_text`` on every record, the
way a first pipeline is usually written. Timed on a sample (it is ~50x slower) and reported per record.
``per_record_stage``: the whole per-record work of the per-file stage on a sample (``process_paragraph``:
language, cleaning, quality signals, MinHash signature).

    .venv/bin/python benchmarks/bench_clean.py [--mb 50] [--naive-sample 3000]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import ftfy
from pylatexenc.latex2text import LatexNodes2Text

from benchmarks.common import SEEDS, peak_rss_mb, save, seed_files
from checks import load_policy
from corpus_hygiene.clean import clean_text
from corpus_hygiene.models import Header, Paragraph, SourceFile
from corpus_hygiene.pipeline.process import process_paragraph


def dirty(text: str, rng: random.Random) -> str:
    r = rng.random()
    if r < 0.10:
        return text.encode("utf-8").decode("cp1252", errors="replace")
    if r < 0.40:
        words = text.split(" ")
        for _ in range(6):
            i = rng.randrange(len(words))
            w = words[i]
            words[i] = rng.choice(
                [
                    rf"\textbf{{{w}}}",
                    rf"\emph{{{w}}}",
                    rf"{w} $\mathcal{{O}}(n^{{2}})$",
                    rf"{w} by 12\% over",
                    rf"$x_i^{{2}}$ {w}",
                    rf"$\sigma \to 0$ {w}",
                ]
            )
        return " ".join(words)
    return text


def build(mb: float, make_dirty: bool) -> list[str]:
    rng = random.Random(1)
    paras = [p for _, ps in seed_files() for p in ps]
    out, size = [], 0
    while size < mb * 1024 * 1024:
        for p in paras:
            t = dirty(p, rng) if make_dirty else p
            out.append(t)
            size += len(t.encode())
    return out


def rate(fn, texts: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    for t in texts:
        fn(t)
    secs = time.perf_counter() - start
    return len(texts) / secs, secs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--naive-sample", type=int, default=3000)
    parser.add_argument("--stage-sample", type=int, default=5000)
    args = parser.parse_args()
    if not SEEDS.is_dir():
        print(f"benchmark needs {SEEDS}", file=sys.stderr)
        return 2
    converter = LatexNodes2Text()

    def naive(t: str) -> str:
        return converter.latex_to_text(ftfy.fix_text(t))

    policy = load_policy()
    src = SourceFile("bench.txt", Path("bench.txt"), 0)
    header = Header(1, "ICLR 2026 Papers", "ICLR", 2026, "Papers", "en")

    def per_record(t: str):
        return process_paragraph(src, header, Paragraph(3, t), policy)

    clean_text("warm up \\textbf{x} $y$")  # load wordfreq and pylatexenc once
    per_record("warm up the language detector and the MinHash permutations")
    result = {}
    for name, make_dirty in (("mostly_clean", False), ("dirty", True)):
        texts = build(args.mb, make_dirty)
        ours, ours_s = rate(clean_text, texts)
        sample = texts[: args.naive_sample]
        base, _ = rate(naive, sample)
        stage, _ = rate(per_record, texts[: args.stage_sample])
        result[name] = {
            "records": len(texts),
            "mb": round(sum(len(t.encode()) for t in texts) / 1e6, 1),
            "ours_records_per_s": round(ours),
            "ours_seconds": round(ours_s, 1),
            "naive_records_per_s": round(base),
            "speedup_vs_naive": round(ours / base, 1),
            "per_record_stage_records_per_s": round(stage),
        }
    result["peak_rss_mb"] = peak_rss_mb()
    save("clean", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
