"""Gather: per-file results → the three output tables, with the accounting identity checked.

This is the only global step: exact duplicates are collapsed across all files here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from corpus_hygiene.checks import Policy, load_policy
from corpus_hygiene.checks.domain import RECORD_CHECKS
from corpus_hygiene.dedup.exact import DuplicateOf, deduplicate
from corpus_hygiene.dedup.memo import PairMemo
from corpus_hygiene.models import FileResult, Record, Rejected, SourceReport
from corpus_hygiene.record_checks import check_results


class AccountingError(Exception):
    """ingested != kept + duplicates + quarantined: some record went missing or was counted twice."""


@dataclass(slots=True)
class Assembled:
    records: list[dict] = field(default_factory=list)
    duplicates: list[dict] = field(default_factory=list)
    quarantine: list[dict] = field(default_factory=list)
    sources: list[SourceReport] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    quarantine_reasons: dict[str, int] = field(default_factory=dict)
    fix_counts: dict[str, int] = field(default_factory=dict)
    check_counts: dict[str, dict[str, int]] = field(default_factory=dict)  # check → {checked, failed}

    def tables(self) -> dict[str, list[dict]]:
        return {"records": self.records, "duplicates": self.duplicates, "quarantine": self.quarantine}


def _ref(file: str, line: int | None) -> str:
    return f"{file}:{line}" if line is not None else file


def _record_row(rec: Record, dups: list[DuplicateOf]) -> dict:
    also_in = (  # most records have no duplicate: nothing to sort
        sorted((d.record for d in dups), key=lambda r: (r.source_file, r.source_line)) if dups else []
    )
    return {
        "record_id": rec.record_id,
        "source_file": rec.source_file,
        "source_line": rec.source_line,
        "venue": rec.venue,
        "year": rec.year,
        "header_label": rec.header_label,
        "header_lang": rec.header_lang,
        "text": rec.text,
        "text_raw": rec.text_raw,
        "lang": rec.lang,
        "lang_confidence": rec.lang_confidence,
        "n_chars": len(rec.text),
        "n_words": rec.n_words,
        "fixes": list(rec.fixes),
        "dup_count": len(dups),
        "also_in": [r.ref for r in also_in],
    }


def _quarantine_row(rej: Rejected) -> dict:
    return {
        "source_file": rej.source_file,
        "source_line": rej.source_line,
        "reason": rej.reason,
        "detail": rej.detail,
        "text_raw": rej.text_raw,
    }


def assemble(
    results: list[FileResult],
    refused: list[Rejected],
    skipped: list[str] = (),
    policy: Policy | None = None,
    memo: PairMemo | None = None,
) -> Assembled:
    """Check, deduplicate across files and lay out the output tables, sorted by provenance.

    ``memo``: near-duplicate similarities verified by an earlier run (``dedup/memo.py``)."""
    policy = policy or load_policy()
    out = Assembled(sources=[r.source for r in results], skipped=list(skipped))
    check_results(results, policy)  # the per-file stage ran them already; here only for other callers
    records = [rec for r in results for rec in r.records]
    rejected = list(refused) + [rej for r in results for rej in r.rejected]
    names = {c.name for c in RECORD_CHECKS}
    failed_by = Counter(rej.reason for rej in rejected if rej.reason in names)
    checked = len(records) + sum(failed_by.values())
    out.check_counts = {
        c.name: {"checked": checked, "failed": failed_by.get(c.name, 0)} for c in RECORD_CHECKS
    }

    kept, dups = deduplicate(records, policy.dedup_config(), memo)
    by_canonical: dict[int, list[DuplicateOf]] = {}
    for d in dups:
        by_canonical.setdefault(id(d.canonical), []).append(d)
    out.records = [_record_row(rec, by_canonical.get(id(rec), [])) for rec in kept]
    out.records.sort(key=lambda r: (r["source_file"], r["source_line"]))
    out.duplicates = sorted(
        (
            {
                "source_file": d.record.source_file,
                "source_line": d.record.source_line,
                "canonical_id": d.canonical.record_id,
                "canonical_ref": d.canonical.ref,
                "kind": d.kind,
                "similarity": d.similarity,
                "reason": d.reason,
                "text_raw": d.record.text_raw,
            }
            for d in dups
        ),
        key=lambda r: (r["source_file"], r["source_line"]),
    )
    out.quarantine = sorted(
        (_quarantine_row(rej) for rej in rejected),
        key=lambda r: (r["source_file"], -1 if r["source_line"] is None else r["source_line"], r["reason"]),
    )
    out.quarantine_reasons = dict(sorted(Counter(q["reason"] for q in out.quarantine).items()))
    out.fix_counts = dict(sorted(Counter(f for r in out.records for f in r["fixes"]).items()))

    # Accounting: every paragraph of every readable file, and every refused file, exactly once.
    expected: Counter = Counter()  # (file, line), line 0 for a whole file: tuples, not strings (100k+ keys)
    for r in results:
        if r.source.problem and r.source.problem != "no_header":
            expected[(r.source.source_file, 0)] += 1
        expected.update((x.source_file, x.source_line) for x in r.records)
        expected.update((x.source_file, x.source_line) for x in r.rejected if x.source_line is not None)
    expected.update((x.source_file, 0) for x in refused)
    seen = Counter((row["source_file"], row["source_line"] or 0) for row in out.records)
    seen.update((row["source_file"], row["source_line"] or 0) for row in out.duplicates)
    seen.update((row["source_file"], row["source_line"] or 0) for row in out.quarantine)
    ingested = (
        sum(r.source.n_paragraphs for r in results)
        + sum(1 for r in results if r.source.problem and r.source.problem != "no_header")
        + len(refused)
    )
    out.counts = {
        "files": len(results) + len(refused),
        "files_read": sum(1 for r in results if r.source.problem is None),
        "ingested": ingested,
        "kept": len(out.records),
        "duplicates": len(out.duplicates),
        "quarantined": len(out.quarantine),
    }
    check_accounting(out.counts, expected, seen)
    return out


def check_accounting(counts: dict[str, int], expected: Counter, seen: Counter) -> None:
    missing = [_ref(f, line or None) for f, line in sorted(expected - seen)]
    extra = [_ref(f, line or None) for f, line in sorted(seen - expected)]
    total = counts["kept"] + counts["duplicates"] + counts["quarantined"]
    if missing or extra or total != counts["ingested"]:
        parts = [
            f"ingested {counts['ingested']} != kept {counts['kept']} + duplicates "
            f"{counts['duplicates']} + quarantined {counts['quarantined']} ({total})"
        ]
        if missing:
            parts.append(f"missing: {', '.join(missing[:20])}{' …' if len(missing) > 20 else ''}")
        if extra:
            parts.append(f"counted twice or unknown: {', '.join(extra[:20])}")
        raise AccountingError("; ".join(parts))
