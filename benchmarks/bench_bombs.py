"""Cleaning time of one 64 KB paragraph built to be slow: markdown emphasis that never closes, nested
LaTeX, thousands of dollars or braces. Budget: under a second each (every step's work is bounded:
emphasis spans of at most ``markdown.MAX_SPAN`` characters, LaTeX nesting flattened past ``MAX_DEPTH``).

    python -m benchmarks.bench_bombs
"""

from __future__ import annotations

import time

from benchmarks.common import save
from corpus_hygiene.clean import clean_text

SIZE = 64 * 1024


def bombs() -> dict[str, str]:
    n = SIZE
    return {
        "emphasis_never_closed": "*a **b *c " * (n // 10),
        "underscores": "_a_" * (n // 3),
        "backticks": "`a" * (n // 2),
        "links": "[a](" * (n // 4),
        "braces": "{" * n,
        "dollars": "$" * n,
        "nested_macros": "\\textbf{" * (n // 8),
        "nested_scripts": "$x" + "^{" * (n // 2),
        "nested_fractions": "$" + "\\frac{" * (n // 6) + "$",
        "environments": "\\begin{itemize}" * (n // 15),
        "backslashes": "\\" * n,
        "dashes_and_ties": "--~" * (n // 3),
    }


def main() -> int:
    clean_text("warm up \\textbf{x} $y$ *z*")
    seconds = {}
    for name, text in bombs().items():
        start = time.perf_counter()
        clean_text(text)
        seconds[name] = round(time.perf_counter() - start, 3)
    save("bombs", {"paragraph_bytes": SIZE, "seconds": seconds, "slowest": max(seconds.values())})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
