"""What changed since the previously published dataset: records added and removed, shifts in
languages and quarantine reasons. Read from the previous dataset's own Parquet files, so it is right
even when reports were deleted or runs failed in between."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from corpus_hygiene.dataset import DatasetError, verify_checksums

SAMPLE = 20


def _delta(new: Counter, old: Counter) -> dict[str, dict[str, int]]:
    keys = sorted(set(new) | set(old))
    return {
        k: {"before": old.get(k, 0), "now": new.get(k, 0), "change": new.get(k, 0) - old.get(k, 0)}
        for k in keys
        if new.get(k, 0) != old.get(k, 0)
    }


def changes_since_previous(
    dataset_dir: Path | str, records: list[dict], quarantine: list[dict]
) -> dict | None:
    """None when there is no previous (valid) dataset in ``dataset_dir``."""
    dataset_dir = Path(dataset_dir)
    try:
        manifest = verify_checksums(dataset_dir)
    except (DatasetError, OSError, ValueError):
        return None
    old_records = pq.read_table(
        dataset_dir / "records.parquet", columns=["record_id", "source_file", "source_line", "lang"]
    )
    old_quarantine = pq.read_table(dataset_dir / "quarantine.parquet", columns=["reason"])
    old_ids = dict(
        zip(
            old_records.column("record_id").to_pylist(),
            (
                f"{f}:{n}"
                for f, n in zip(
                    old_records.column("source_file").to_pylist(),
                    old_records.column("source_line").to_pylist(),
                    strict=True,
                )
            ),
            strict=True,
        )
    )
    new_ids = {r["record_id"]: f"{r['source_file']}:{r['source_line']}" for r in records}
    added = sorted(set(new_ids) - set(old_ids), key=new_ids.get)
    removed = sorted(set(old_ids) - set(new_ids), key=old_ids.get)
    return {
        "previous_run_id": manifest.get("run_id"),
        "records_before": len(old_ids),
        "records_now": len(new_ids),
        "added": len(added),
        "removed": len(removed),
        "added_sample": [new_ids[i] for i in added[:SAMPLE]],
        "removed_sample": [old_ids[i] for i in removed[:SAMPLE]],
        "languages": _delta(
            Counter(r["lang"] for r in records), Counter(old_records.column("lang").to_pylist())
        ),
        "quarantine": _delta(
            Counter(q["reason"] for q in quarantine), Counter(old_quarantine.column("reason").to_pylist())
        ),
    }
