"""Shared helpers for the benchmarks: where ../shared is, and reading the seed abstracts."""

from __future__ import annotations

import json
import resource
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SEEDS = SHARED / "seeds"
OUT = ROOT / "benchmarks" / "results"


def seed_files() -> list[tuple[str, list[str]]]:
    """(header, paragraphs) of every seed file, read at run time."""
    out = []
    for path in sorted(SEEDS.iterdir()):
        if path.is_file():
            header, *paras = [p.strip() for p in path.read_text("utf-8").split("\n\n") if p.strip()]
            out.append((header, paras))
    return out


def peak_rss_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def save(name: str, result: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=2, ensure_ascii=False))
