"""What changed since the previously published dataset: records added and removed, shifts in
languages and quarantine reasons. Read from the previous dataset's own Parquet files, so it is right
even when reports were deleted or runs failed in between."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from corpus_hygiene.pipeline.rows import columns, string_array
from corpus_hygiene.publish.dataset import DatasetError, verify_checksums, version_folder

SAMPLE = 20


def _counts(column: pa.ChunkedArray) -> Counter:
    """Value → rows, counted by Arrow (the previous version's column is not turned into Python objects)."""
    counted = pc.value_counts(column)
    return Counter(
        dict(zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist(), strict=True))
    )


def _delta(new: Counter, old: Counter) -> dict[str, dict[str, int]]:
    keys = sorted(set(new) | set(old))
    return {
        k: {"before": old.get(k, 0), "now": new.get(k, 0), "change": new.get(k, 0) - old.get(k, 0)}
        for k in keys
        if new.get(k, 0) != old.get(k, 0)
    }


def _reasons(quarantine: Sequence[dict]) -> Counter:
    return Counter(reason for _, (reasons,) in columns(quarantine, "reason") for reason in reasons)


def changes_since_previous(
    dataset_dir: Path | str, records: Sequence[dict], quarantine: Sequence[dict]
) -> dict | None:
    """None when there is no previous (valid) dataset in ``dataset_dir``.

    Records are matched by ``record_id``; the previous version's columns stay in Arrow and only the
    added and removed rows become Python objects (a dict of every old row would cost seconds at 1M)."""
    dataset_dir = version_folder(dataset_dir)
    try:
        manifest = verify_checksums(dataset_dir)
    except (DatasetError, OSError):
        return None
    old = pq.read_table(
        dataset_dir / "records.parquet", columns=["record_id", "source_file", "source_line", "lang"]
    )
    old_reasons = pq.read_table(dataset_dir / "quarantine.parquet", columns=["reason"]).column("reason")
    old_ids = old.column("record_id")
    # the new ids as Arrow and the languages counted, a slice at a time: never N Python strings at once
    parts, langs = [], Counter()
    for _, (ids, lang) in columns(records, "record_id", "lang"):
        parts.append(string_array(ids))
        langs.update(lang)
    new_ids = pa.chunked_array(parts, pa.string())
    is_new = pc.invert(pc.is_in(new_ids, value_set=old_ids)).to_numpy(zero_copy_only=False)
    added = {}  # an id is one record: the last row of an id names it, as a dict of the rows would
    for lo, (ids, files, lines) in columns(records, "record_id", "source_file", "source_line"):
        for i in np.flatnonzero(is_new[lo : lo + len(ids)]).tolist():
            added[ids[i]] = f"{files[i]}:{lines[i]}"
    gone = old.filter(pc.invert(pc.is_in(old_ids, value_set=new_ids))).to_pylist()
    removed = {r["record_id"]: f"{r['source_file']}:{r['source_line']}" for r in gone}
    return {
        "previous_run_id": manifest.get("run_id"),
        "records_before": pc.count_distinct(old_ids).as_py(),
        "records_now": pc.count_distinct(new_ids).as_py(),
        "added": len(added),
        "removed": len(removed),
        "added_sample": sorted(added.values())[:SAMPLE],
        "removed_sample": sorted(removed.values())[:SAMPLE],
        "languages": _delta(langs, _counts(old.column("lang"))),
        "quarantine": _delta(_reasons(quarantine), _counts(old_reasons)),
    }
