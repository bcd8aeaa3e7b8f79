"""Gather: per-file results → the three output tables, with the accounting identity checked.

This is the only global step: exact duplicates are collapsed across all files here. The records are
staged on disk (``staging.py``); this step works on their keys and reads back only the columns it shows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from corpus_hygiene.checks import Policy, load_policy
from corpus_hygiene.checks.domain import RECORD_CHECKS
from corpus_hygiene.dedup.exact import VerifiedPair, deduplicate
from corpus_hygiene.incremental.pair_memo import PairMemo
from corpus_hygiene.models import FileResult, Record, Rejected, SourceReport
from corpus_hygiene.pipeline.record_checks import check_results
from corpus_hygiene.pipeline.rows import DuplicateRows, RecordRows, column
from corpus_hygiene.pipeline.staging import Keys, RecordKey, RecordStore

if TYPE_CHECKING:
    from corpus_hygiene.dedup.near import PairSearch


class AccountingError(Exception):
    """ingested != kept + duplicates + quarantined: some record went missing or was counted twice."""


@dataclass(slots=True)
class Assembled:
    records: RecordRows | list[dict] = field(default_factory=list)  # rows.py: no dict per row
    duplicates: DuplicateRows | list[dict] = field(default_factory=list)  # rows.py: texts stay staged
    quarantine: list[dict] = field(default_factory=list)
    pairs: list[dict] = field(default_factory=list)  # every verified near-duplicate pair (the audit's)
    sources: list[SourceReport] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    quarantine_reasons: dict[str, int] = field(default_factory=dict)
    fix_counts: dict[str, int] = field(default_factory=dict)
    check_counts: dict[str, dict[str, int]] = field(default_factory=dict)  # check → {checked, failed}

    def tables(self) -> dict[str, list[dict]]:
        return {
            "records": self.records,
            "duplicates": self.duplicates,
            "quarantine": self.quarantine,
            "pairs": self.pairs,
        }


def _ref(file: str, line: int | None) -> str:
    return f"{file}:{line}" if line is not None else file


def _provenance(rec: Record | RecordKey) -> tuple[str, int]:
    return rec.source_file, rec.source_line


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
    search: PairSearch | None = None,
    store: RecordStore | None = None,
) -> Assembled:
    """Check, deduplicate across files and lay out the output tables, sorted by provenance.

    ``memo``: near-duplicate similarities verified by an earlier run (``incremental/pair_memo.py``);
    ``search``: the near-duplicate search done elsewhere, on a cluster (``near.PairSearch``);
    ``store``: where the records are staged (the flow stages each batch as it arrives; records still in
    ``results`` are staged here, in a temporary store when none is given)."""
    policy = policy or load_policy()
    check_results(results, policy)  # the per-file stage ran them already; here only for other callers
    store = store if store is not None else RecordStore()
    results = store.add(results)
    out = Assembled(sources=[r.source for r in results], skipped=list(skipped))
    keys = store.keys
    rejected = list(refused) + [rej for r in results for rej in r.rejected]
    names = {c.name for c in RECORD_CHECKS}
    failed_by = Counter(rej.reason for rej in rejected if rej.reason in names)
    checked = len(keys) + sum(failed_by.values())
    out.check_counts = {
        c.name: {"checked": checked, "failed": failed_by.get(c.name, 0)} for c in RECORD_CHECKS
    }

    verified: list[VerifiedPair] = []
    kept, dups = deduplicate(keys, policy.dedup_config(), memo, verified, search, store.column)
    out.pairs = sorted(
        (
            {
                "source_file": v.record.source_file,
                "source_line": v.record.source_line,
                "record_id": v.record.record_id,
                "candidate_id": v.candidate.record_id,
                "candidate_ref": v.candidate.ref,
                "similarity": v.similarity,
                "merged": v.merged,
            }
            for v in verified
        ),
        key=lambda r: (r["source_file"], r["source_line"], r["candidate_ref"]),
    )
    kept = kept.take(kept.provenance_order())
    by_canonical: dict[int, list[RecordKey]] = {}
    for d in dups:
        by_canonical.setdefault(d.canonical.pos, []).append(d.record)
    row_of = np.zeros(len(keys), np.int64)
    row_of[kept.pos] = np.arange(len(kept))
    also_in = {  # by row: the refs of the copies a kept record stands for
        int(row_of[pos]): [r.ref for r in sorted(copies, key=_provenance)]
        for pos, copies in by_canonical.items()
    }
    out.records = RecordRows(kept, also_in, store)
    dups.sort(key=lambda d: _provenance(d.record))
    rows = [
        {
            "source_file": d.record.source_file,
            "source_line": d.record.source_line,
            "canonical_id": d.canonical.record_id,
            "canonical_ref": d.canonical.ref,
            "kind": d.kind,
            "similarity": d.similarity,
            "reason": d.reason,
        }
        for d in dups
    ]
    out.duplicates = DuplicateRows(rows, np.array([d.record.pos for d in dups], np.int64), store)
    out.quarantine = sorted(
        (_quarantine_row(rej) for rej in rejected),
        key=lambda r: (r["source_file"], -1 if r["source_line"] is None else r["source_line"], r["reason"]),
    )
    out.quarantine_reasons = dict(sorted(Counter(q["reason"] for q in out.quarantine).items()))
    out.fix_counts = dict(sorted(Counter(f for fixes in column(out.records, "fixes") for f in fixes).items()))

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
    placed = np.concatenate([kept.pos, np.array([d.record.pos for d in dups], np.int64)])
    seen = Counter((row["source_file"], row["source_line"] or 0) for row in out.quarantine)
    check_accounting(out.counts, keys, placed, _expected_rejections(results, refused), seen)
    return out


def _expected_rejections(results: list[FileResult], refused: list[Rejected]) -> Counter:
    """The quarantine rows the inputs call for, as (file, line), line 0 for a whole file."""
    expected: Counter = Counter()
    for r in results:
        if r.source.problem and r.source.problem != "no_header":
            expected[(r.source.source_file, 0)] += 1
        expected.update((x.source_file, x.source_line) for x in r.rejected if x.source_line is not None)
    expected.update((x.source_file, 0) for x in refused)
    return expected


def check_accounting(
    counts: dict[str, int], staged: Keys, placed: np.ndarray, expected: Counter, seen: Counter
) -> None:
    """Every staged record in the records or duplicates table exactly once (``placed``: their positions),
    every rejection in quarantine once, and ingested = kept + duplicates + quarantined."""
    times = np.bincount(placed, minlength=len(staged))
    missing = [staged[i].ref for i in np.flatnonzero(times == 0)[:21].tolist()]
    missing += [_ref(f, line or None) for f, line in sorted(expected - seen)]
    extra = [staged[i].ref for i in np.flatnonzero(times > 1)[:21].tolist()]
    extra += [_ref(f, line or None) for f, line in sorted(seen - expected)]
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
