"""Near-duplicate detection at scale: LSH + verification + clustering over N records, time and memory.

Records are made from the real pool abstracts (../shared/corpora, read at run time): 90% are rewritten
with 60% of their words replaced from the pool vocabulary (distinct documents, so they become
canonicals and fill the LSH index, the memory-relevant case), 10% carry 0-10% edits of an earlier
record (duplicates to find). Reports records/s and peak RSS for the whole step.

    .venv/bin/python -m benchmarks.bench_dedup_scale [--records 1000000]
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from benchmarks.bench_dedup import edit
from benchmarks.common import peak_rss_mb, save
from benchmarks.corpora import load_pools
from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.near import find_near_duplicates


def build(n: int, rng: random.Random) -> tuple[list[str], int]:
    pool = [t for lang in ("en", "fr", "es", "pt", "de") for t in load_pools()[lang]]
    vocab = [w for t in pool[:2000] for w in t.split(" ")]
    texts, planted = [], 0
    for i in range(n):
        if i > 1000 and rng.random() < 0.10:
            texts.append(edit(texts[rng.randrange(i)], "en", rng.uniform(0.0, 0.10), rng, vocab))
            planted += 1
        else:
            texts.append(edit(pool[i % len(pool)], "en", 0.6, rng, vocab))
    return texts, planted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    args = parser.parse_args()
    rng = random.Random(3)
    texts, planted = build(args.records, rng)
    rss_before = peak_rss_mb()
    start = time.perf_counter()
    matches = find_near_duplicates(texts, DedupConfig())
    secs = time.perf_counter() - start
    save(
        f"dedup_scale_{args.records}",
        {
            "records": args.records,
            "planted_near_duplicates": planted,
            "found": len(matches),
            "seconds": round(secs, 1),
            "records_per_s": round(args.records / secs),
            "peak_rss_mb_before_dedup": rss_before,
            "peak_rss_mb": peak_rss_mb(),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
