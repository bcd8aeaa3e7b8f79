"""The LSH candidate search in one process (``near.candidate_pairs``) against the same search as a
shuffle on a local Dask cluster (``dedup/shuffle.py``), on the same signatures; the pairs must be equal.

Signatures of ``--records`` abstracts made like bench_dedup_scale's (real pool abstracts, read at run
time, 10% near copies), then ``--copies`` copies of the matrix, each XORed with its own constants (a
corpus that many times larger with the same bucket structure; no pair across copies).

    .venv/bin/python -m benchmarks.bench_lsh_shuffle [--records 20000] [--copies 5] [--workers 2]
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

from benchmarks.bench_dedup_scale import build
from benchmarks.common import peak_rss_mb, save
from corpus_hygiene.checks import load_policy
from corpus_hygiene.dedup.near import candidate_pairs, cjk_mask, signature_matrix


def _timed(fn, rounds: int) -> tuple[list[float], np.ndarray]:
    times, out = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        out = fn()
        times.append(round(time.perf_counter() - start, 2))
    return times, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from corpus_hygiene.cluster import local_cluster
    from corpus_hygiene.dedup.shuffle import candidate_pairs_on_cluster

    config = load_policy().dedup_config()
    texts, _ = build(args.records, random.Random(3))
    one = signature_matrix(texts, config)
    rng = np.random.default_rng(0)
    signatures = np.concatenate(
        [
            one if k == 0 else one ^ rng.integers(1, 2**32, size=one.shape[1], dtype=np.uint32)
            for k in range(args.copies)
        ]
    )
    cjk = np.tile(cjk_mask(texts), args.copies)
    local, expected = _timed(lambda: candidate_pairs(signatures, config, cjk), args.rounds)
    cluster = local_cluster(args.workers)
    try:
        from distributed import Client

        with Client(cluster) as client:
            shuffled, got = _timed(
                lambda: candidate_pairs_on_cluster(client, signatures, config, cjk), args.rounds
            )
    finally:
        cluster.close()
    if not np.array_equal(got, expected):
        raise SystemExit(f"the shuffle found {len(got)} pairs, the one-process search {len(expected)}")
    save(
        f"lsh_shuffle_{len(signatures)}_w{args.workers}",
        {
            "records": len(signatures),
            "pairs": len(expected),
            "one_process_seconds": local,
            "cluster_seconds": shuffled,
            "workers": args.workers,
            "peak_rss_mb_this_process": peak_rss_mb(),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
