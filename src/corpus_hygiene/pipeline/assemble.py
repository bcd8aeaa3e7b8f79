"""Gather: per-file results → the three output tables, with the accounting identity checked.

This is the only global step: exact duplicates are collapsed across all files here. The records are
staged on disk (``store/records.py``); this step works on their keys and reads back only the columns it shows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from checks import Policy, load_policy
from checks.domain import RECORD_CHECKS
from corpus_hygiene.dedup.deduplicate import cjk_flags, deduplicate
from corpus_hygiene.dedup.keys import id_bytes
from corpus_hygiene.dedup.near import PairSearch
from corpus_hygiene.incremental.pair_memo import PairMemo
from corpus_hygiene.models import FileResult, Rejected, SourceReport
from corpus_hygiene.pipeline.record_checks import check_results
from corpus_hygiene.reference.contamination import Contamination
from corpus_hygiene.reference.index import IndexedReference
from corpus_hygiene.reference.match import match_records, placed, summary
from corpus_hygiene.store.keys import Keys
from corpus_hygiene.store.records import RecordStore, RejectedKeys, pack_rejected
from corpus_hygiene.store.rows import Copies, DuplicateRows, PairRows, QuarantineRows, RecordRows, columns


class AccountingError(Exception):
    """ingested != kept + duplicates + quarantined: some record went missing or was counted twice."""


@dataclass(slots=True)
class Assembled:
    records: RecordRows | list[dict] = field(default_factory=list)  # rows.py: no dict per row
    duplicates: DuplicateRows | list[dict] = field(default_factory=list)  # rows.py: texts stay staged
    quarantine: QuarantineRows | list[dict] = field(default_factory=list)  # rows.py: all of it staged
    pairs: PairRows | list[dict] = field(default_factory=list)  # every verified near pair (the audit's)
    sources: list[SourceReport] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    quarantine_reasons: dict[str, int] = field(default_factory=dict)
    fix_counts: dict[str, int] = field(default_factory=dict)
    check_counts: dict[str, dict[str, int]] = field(default_factory=dict)  # check → {checked, failed}
    references: list[dict] = field(default_factory=list)  # what each reference removed (match.summary)

    def tables(self) -> dict[str, list[dict]]:
        return {
            "records": self.records,
            "duplicates": self.duplicates,
            "quarantine": self.quarantine,
            "pairs": self.pairs,
        }


def _ref(file: str, line: int | None) -> str:
    return f"{file}:{line}" if line is not None else file


def assemble(
    results: list[FileResult],
    refused: list[Rejected],
    skipped: list[str] = (),
    policy: Policy | None = None,
    memo: PairMemo | None = None,
    search: PairSearch | None = None,
    store: RecordStore | None = None,
    references: Sequence[IndexedReference] = (),
    contamination: Contamination | None = None,
) -> Assembled:
    """Check, deduplicate across files and lay out the output tables, sorted by provenance.

    ``memo``: near-duplicate similarities verified by an earlier run (``incremental/pair_memo.py``);
    ``search``: the near-duplicate search done elsewhere, on a cluster (``near.PairSearch``);
    ``store``: where the records are staged (the flow stages each batch as it arrives; records still in
    ``results`` are staged here, in a temporary store when none is given); ``references``: indexed
    references (``reference/``), whose copies become reference duplicates and whose short texts a
    record contains make it ``contaminated``, before the run's own dedup."""
    policy = policy or load_policy()
    check_results(results, policy)  # the per-file stage ran them already; here only for other callers
    store = store if store is not None else RecordStore()
    results = store.add(results)
    store.add(pack_rejected(list(refused)))
    out = Assembled(sources=[r.source for r in results], skipped=list(skipped))
    keys, config = store.keys, policy.dedup_config()
    contamination = contamination or Contamination()
    ids = _ids(keys) if references else np.zeros(0, "S16")
    matches = match_records(references, ids, store.column, cjk_flags(keys), config, contamination, search)
    copies, contaminated = placed(matches, references, keys, store, contamination)
    store.add(pack_rejected(contaminated))
    out.references = summary(matches, references, keys, store)
    rejected = store.rejected_keys
    out.quarantine_reasons = rejected.reason_counts()
    names = {c.name for c in RECORD_CHECKS}
    checked = len(keys) + sum(n for reason, n in out.quarantine_reasons.items() if reason in names)
    out.check_counts = {
        c.name: {"checked": checked, "failed": out.quarantine_reasons.get(c.name, 0)} for c in RECORD_CHECKS
    }

    exclude = np.zeros(len(keys), bool)
    exclude[matches.record] = True
    kept, dups, pairs = deduplicate(keys, config, memo, search, store.column, exclude)
    # the pairs by (source_file, source_line, candidate_ref), the ref compared as a string
    files = keys.files.ranks()
    candidate_ref = np.unique(np.array(keys.take(pairs.candidate).refs(), object), return_inverse=True)[1]
    by_record = (candidate_ref, keys.source_line[pairs.record], files[keys.source_file[pairs.record]])
    out.pairs = PairRows(pairs.take(np.lexsort(by_record)))
    kept = kept.pos[kept.provenance_order()]  # indices into keys: theirs are positions
    dups = dups.take(keys.take(dups.record).provenance_order())
    row_of = np.zeros(len(keys), np.int64)
    row_of[kept] = np.arange(len(kept))
    rows = row_of[dups.canonical]
    del row_of
    by_row = np.argsort(rows, kind="stable")  # a row's copies stay in provenance order
    out.records = RecordRows(keys, kept, Copies(rows[by_row], dups.record[by_row], keys), store)
    out.duplicates = DuplicateRows(dups, store, copies)
    out.quarantine = QuarantineRows(rejected.order(), store)
    counted = Counter(f for _, (part,) in columns(out.records, "fixes") for fixes in part for f in fixes)
    out.fix_counts = dict(sorted(counted.items()))

    ingested = (
        sum(r.source.n_paragraphs for r in results)
        + sum(1 for r in results if r.source.problem and r.source.problem != "no_header")
        + len(refused)
    )
    out.counts = {
        "files": len(results) + len(refused),
        "files_read": sum(1 for r in results if r.source.sha256 is not None),  # read, quarantined or not
        "ingested": ingested,
        "kept": len(out.records),
        "duplicates": len(out.duplicates),
        "reference_duplicates": len(copies),
        "quarantined": len(out.quarantine),
    }
    # a contaminated record is staged twice, as a record and as a rejection: placed by the latter
    where = np.concatenate([kept, dups.record, matches.record])
    check_accounting(out.counts, keys, where, rejected, _whole_files(results, refused))
    return out


def _ids(keys: Keys) -> np.ndarray:
    """The records' ids as 16-byte keys (``S16``), read from the store."""
    return id_bytes(keys.arrow("record_id")).view("S16").ravel() if len(keys) else np.zeros(0, "S16")


def _whole_files(results: list[FileResult], refused: list[Rejected]) -> Counter:
    """The files the inputs call for a whole-file quarantine row for."""
    problem = [r.source.source_file for r in results if r.source.problem and r.source.problem != "no_header"]
    return Counter(problem + [x.source_file for x in refused])


def check_accounting(
    counts: dict[str, int], staged: Keys, placed: np.ndarray, rejected: RejectedKeys, whole_files: Counter
) -> None:
    """Every staged record in the records or duplicates table exactly once (``placed``: their positions),
    a whole-file quarantine row for each of ``whole_files``, no line quarantined twice, and ingested =
    kept + duplicates + quarantined."""
    times = np.bincount(placed, minlength=len(staged))
    files, whole = rejected.files.values, rejected.source_line < 0
    seen = Counter(files[f] for f in rejected.source_file[whole].tolist())
    lines = rejected.source_file[~whole].astype(np.int64) << 32 | rejected.source_line[~whole]
    values, times_quarantined = np.unique(lines, return_counts=True)
    missing = [staged[i].ref for i in np.flatnonzero(times == 0)[:21].tolist()]
    missing += sorted(whole_files - seen)
    extra = [staged[i].ref for i in np.flatnonzero(times > 1)[:21].tolist()]
    extra += sorted(seen - whole_files)
    extra += [_ref(files[v >> 32], v & 0xFFFFFFFF) for v in values[times_quarantined > 1][:21].tolist()]
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
