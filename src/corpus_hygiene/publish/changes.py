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

from corpus_hygiene.dedup.exact import lookup
from corpus_hygiene.publish.read import DatasetError, verify_checksums, version_folder
from corpus_hygiene.store.rows import columns, string_keys

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

    Records are matched by ``record_id``. Both versions' ids are held as sorted 16-byte keys
    (``rows.string_keys``; the new ones also in row order) and every table is read a slice at a time:
    only the added and removed rows become Python objects."""
    dataset_dir = version_folder(dataset_dir)
    try:
        manifest = verify_checksums(dataset_dir)
    except (DatasetError, OSError):
        return None
    new_keys, langs = [], Counter()
    for _, (ids, lang) in columns(records, "record_id", "lang"):
        new_keys.append(string_keys(ids))
        langs.update(lang)
    new_keys = np.concatenate([string_keys([]), *new_keys])
    new_sorted = np.sort(new_keys)
    # one pass over the previous version: its ids' keys, and the rows of those gone (few, as Python)
    old_keys, old_langs, removed = [], Counter(), {}
    names = ["record_id", "lang", "source_file", "source_line"]
    for batch in pq.ParquetFile(dataset_dir / "records.parquet").iter_batches(columns=names):
        keys = string_keys(batch.column("record_id").to_pylist())
        gone = batch.filter(pa.array(~lookup(new_sorted, keys)[0])).to_pylist()
        removed.update((r["record_id"], f"{r['source_file']}:{r['source_line']}") for r in gone)
        old_keys.append(keys)
        old_langs += _counts(batch.column("lang"))
    old_keys = np.concatenate([string_keys([]), *old_keys])
    old_keys.sort()
    added = {}  # an id is one record: the last row of an id names it, as a dict of the rows would
    is_new = ~lookup(old_keys, new_keys)[0]
    for lo, (ids, files, lines) in columns(records, "record_id", "source_file", "source_line"):
        for i in np.flatnonzero(is_new[lo : lo + len(ids)]).tolist():
            added[ids[i]] = f"{files[i]}:{lines[i]}"
    old_reasons = pq.read_table(dataset_dir / "quarantine.parquet", columns=["reason"]).column("reason")
    return {
        "previous_run_id": manifest.get("run_id"),
        "previous_policy_sha256": manifest.get("policy_sha256"),
        "previous_code_version": manifest.get("code_version"),
        "records_before": _distinct(old_keys),
        "records_now": _distinct(new_sorted),
        "added": len(added),
        "removed": len(removed),
        "added_sample": sorted(added.values())[:SAMPLE],
        "removed_sample": sorted(removed.values())[:SAMPLE],
        "languages": _delta(langs, old_langs),
        "quarantine": _delta(_reasons(quarantine), _counts(old_reasons)),
    }


def _distinct(sorted_keys: np.ndarray) -> int:
    return int(np.count_nonzero(sorted_keys[1:] != sorted_keys[:-1])) + min(len(sorted_keys), 1)
