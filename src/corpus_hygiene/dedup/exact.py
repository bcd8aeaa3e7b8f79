"""Exact duplicates: records that share a dedup key collapse onto one canonical record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from corpus_hygiene.models import Record


@dataclass(frozen=True, slots=True)
class DuplicateOf:
    record: Record
    canonical: Record
    kind: str  # "exact" | "near"
    similarity: float


def canonical_rank(record: Record) -> tuple:
    """Smaller is better: fewer repairs, then longer text, then earliest provenance (stable)."""
    return (len(record.fixes), -len(record.text), record.source_file, record.source_line)


def group_exact(records: Sequence[Record]) -> tuple[list[Record], list[DuplicateOf]]:
    """Return (canonical records, duplicates), both in input order of the canonical records."""
    groups: dict[str, list[Record]] = {}
    for rec in records:
        groups.setdefault(rec.dedup_key, []).append(rec)
    kept: list[Record] = []
    dups: list[DuplicateOf] = []
    for members in groups.values():
        best = min(members, key=canonical_rank)
        kept.append(best)
        dups.extend(DuplicateOf(m, best, "exact", 1.0) for m in members if m is not best)
    return kept, dups
