"""The record checks of checks/ over candidate records: failures become quarantine rows.

They run before dedup, so that junk never becomes the canonical copy that others point to, and in the
per-file stage (``process.process_files``), so that they run in parallel and are cached with the file.
"""

from __future__ import annotations

from checks import Policy
from checks.routing import candidate_frame, route
from corpus_hygiene.isolation import describe_failure
from corpus_hygiene.models import FileResult, Record, Rejected
from corpus_hygiene.reasons import Reason
from corpus_hygiene.signals import SIGNAL_COLUMNS


def apply_record_checks(records: list[Record], policy: Policy) -> tuple[list[Record], list[Rejected]]:
    """Run the named checks of checks/ over every candidate; failures become quarantine rows.

    Before dedup, so that junk never becomes the canonical copy that others point to.
    """
    frame = candidate_frame(
        [
            {
                "text": r.text,
                "lang": r.lang,
                "year": r.year,
                "venue": r.venue,
                "header_label": r.header_label,
                "n_chars": len(r.text),
                "lost_words": r.lost_words,
                **{c: getattr(r, c) for c in SIGNAL_COLUMNS},
                "pii": {"email": r.n_emails, "phone": r.n_phones},
            }
            for r in records
        ]
    )
    failures = {f.index: f for f in route(frame, policy)}
    passed = [r for i, r in enumerate(records) if i not in failures]
    rejected = [
        Rejected(records[i].source_file, records[i].source_line, f.reason, f.detail, records[i].text_raw)
        for i, f in failures.items()
    ]
    return passed, rejected


CHECK_ROWS = 10_000  # records per frame: pandera's copies of a frame bound the memory, not a file's size


def check_results(results: list[FileResult], policy: Policy) -> None:
    """Run the record checks over the records of ``results`` not checked yet, ``CHECK_ROWS`` at a time;
    each failure leaves its file's records for its rejections (a quarantine row named after the check)."""
    todo = [r for r in results if not r.checked]
    candidates = [rec for r in todo for rec in r.records]
    failed = []
    for lo in range(0, len(candidates), CHECK_ROWS):
        chunk = candidates[lo : lo + CHECK_ROWS]
        try:
            failed += apply_record_checks(chunk, policy)[1]
        except Exception:  # one record the checks cannot take: find it, check the others as usual
            failed += [row for rec in chunk for row in _check_alone(rec, policy)]
    failed_refs = {(f.source_file, f.source_line): f for f in failed}
    for result in todo:
        kept = []
        for rec in result.records:
            failure = failed_refs.get((rec.source_file, rec.source_line))
            (result.rejected if failure else kept).append(failure or rec)
        result.records, result.checked = kept, True


def _check_alone(record: Record, policy: Policy) -> list[Rejected]:
    """The record's failures, or a ``processing_error`` row when checking it raises (isolation.py)."""
    try:
        return apply_record_checks([record], policy)[1]
    except Exception as exc:
        detail = describe_failure("record_checks", exc)
        where = (record.source_file, record.source_line)
        return [Rejected(*where, Reason.PROCESSING_ERROR.value, detail, record.text_raw)]
