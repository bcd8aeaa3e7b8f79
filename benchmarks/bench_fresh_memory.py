"""What a megabyte of new memory costs this machine: the first touch of memory the kernel had handed
back to the host, against memory it reuses at once. Why a stage that grows its memory (the gates' first
Arrow slice) can run slower inside a run than the same code in a warm benchmark process.

    .venv/bin/python -m benchmarks.bench_fresh_memory [--mb 512] [--pause 5] [--rounds 3]

Each round allocates ``--mb`` MB with numpy (``np.ones``: every page written) and frees it. An "after
a pause" round waits ``--pause`` seconds first (long enough for the guest's free page reporting to hand
the freed memory to the host); an "at once" round follows it right after it freed the same amount.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from benchmarks.common import save


def touch(mb: int) -> float:
    """Seconds to allocate and write ``mb`` MB (the array is freed on return)."""
    start = time.perf_counter()
    block = np.ones(mb << 20, dtype=np.uint8)
    elapsed = time.perf_counter() - start
    del block
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=512)
    parser.add_argument("--pause", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rounds = {"at_once": [], "after_pause": []}
    for _ in range(args.rounds):
        time.sleep(args.pause)
        rounds["after_pause"].append(touch(args.mb))
        rounds["at_once"].append(touch(args.mb))  # right after the same amount was freed
    save(
        "fresh_memory",
        {
            "mb": args.mb,
            "pause_seconds": args.pause,
            **{
                name: {
                    "seconds": [round(s, 3) for s in times],
                    "mb_per_s": [round(args.mb / s) for s in times],
                    "ms_per_mb": [round(1000 * s / args.mb, 2) for s in times],
                }
                for name, times in rounds.items()
            },
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
