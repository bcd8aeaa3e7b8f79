"""Dataset gates: whole-run conditions that decide whether a dataset is published at all."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.errors
import pyarrow as pa
import pyarrow.compute as pc

from checks import Policy
from checks.schemas import TABLE_MODELS, to_frame
from corpus_hygiene.reasons import Reason
from corpus_hygiene.store.rows import STRING_KEY, provenance_numbers, string_keys
from corpus_hygiene.store.spill import PARTS, Spill


@dataclass(frozen=True, slots=True)
class GateResult:
    name: str
    passed: bool
    detail: str


Frames = Mapping[str, "pd.DataFrame | Iterable[pd.DataFrame | pa.Table]"]  # a table whole, or in slices


def _slices(table) -> Iterable:
    return [table] if isinstance(table, pd.DataFrame | pa.Table) else table


class _Repeats:
    """Which rows repeat the value of a row in an earlier slice, found once every slice is in. Each
    slice's keys go to disk with their row numbers (``spill.Spill``) and are compared a part at a time,
    so the gates hold one part of a column's values, not all of them."""

    def __init__(self, key: np.dtype, folder: Path | None = None, parts: int = PARTS) -> None:
        self._spill = Spill(np.dtype([("key", key), ("row", "<i8")]), folder, parts)
        self._starts: list[int] = []  # each slice's first row

    def add(self, keys: np.ndarray, first_row: int) -> None:
        """A slice's keys, its rows numbered from ``first_row`` (after the slices before)."""
        if len(keys):
            rows = np.empty(len(keys), self._spill.dtype)
            rows["key"], rows["row"] = keys, np.arange(first_row, first_row + len(keys))
            self._spill.add(rows)
            self._starts.append(first_row)

    def found(self) -> tuple[np.ndarray, int]:
        """The rows whose value a row of an earlier slice holds, in order; and how many rows repeat an
        earlier row of any slice (rows less distinct values)."""
        starts, earlier, repeats = np.array(self._starts, np.int64), [np.zeros(0, np.int64)], 0
        for part, first in self._spill.sorted_parts():  # rows were added in order: a value's first row first
            repeats += len(part) - int(first.sum())
            slice_of = np.searchsorted(starts, part["row"], "right") - 1
            earlier.append(part["row"][slice_of > slice_of[first][np.cumsum(first) - 1]])
        self._spill.remove()
        return np.sort(np.concatenate(earlier)), repeats


def schema_failures(frames: Frames) -> list[str]:
    """Every contract violation in the four tables, one line each (empty when all conform)."""
    return _validate(frames)[0]


def _validate(
    frames: Frames, checked_before: frozenset[str] = frozenset(), scratch: Path | None = None
) -> tuple[list[str], int]:
    """The contract violations, and how many record_id values repeat. A table given in slices is
    validated a slice at a time; the two checks that span rows (record_id unique, one row per
    provenance) are then also made across slices, over keys spilled to ``scratch`` (a temporary folder
    when ``None``).

    ``checked_before``: source files whose record rows passed every row-level check in a published run
    under the same code and policy (``FileCache.contract_checked``). Given records as Arrow slices,
    pandera validates only the other rows (pandera is most of the gates' cost);
    the checks that span rows, and the two columns that a later run can change in a checked row
    (dup_count, also_in: the duplicates found among new files), are made over every row."""
    lines: list[str] = []
    repeated_ids = 0
    known = pa.array(sorted(checked_before), pa.string()) if checked_before else None
    for name, model in TABLE_MODELS.items():
        offset, found = 0, 0
        across = _AcrossRows(scratch) if name == "records" else None
        for piece in _slices(frames[name]):
            frame, keys, trusted = _split(piece, known if name == "records" else None)
            try:
                model.validate(frame, lazy=True)
            except pandera.errors.SchemaErrors as errors:
                cases = errors.failure_cases
                for _, case in cases.head(max(0, 50 - found)).iterrows():
                    where = f"row {int(case['index']) + offset}" if pd.notna(case["index"]) else "table"
                    lines.append(
                        f"{name}.{case['column'] or '*'}: {case['check']} failed at {where} "
                        f"(value {str(case['failure_case'])[:60]!r})"
                    )
                found += len(cases)
            if across is not None and len(keys):
                lines += across.add(keys, trusted, offset)
            offset += len(keys)
            del piece, frame, keys  # not alive while the next slice is made
        if found > 50:
            lines.append(f"{name}: … {found - 50} more failures")
        if across is not None:
            more, repeated_ids = across.found()
            lines += more
    return lines, repeated_ids


class _AcrossRows:
    """The checks that span the records' rows: record_id unique, one row per provenance; and, where
    pandera saw only some rows of a slice (``trusted`` is not None), repeats within the slice and
    dup_count of the rows it did not see."""

    def __init__(self, scratch: Path | None) -> None:
        self.ids, self.refs = _Repeats(STRING_KEY, scratch), _Repeats(np.dtype("<i8"), scratch)
        self._files: dict[str, int] = {}  # a file's number in the provenance keys
        self._unseen_ids, self._unseen_refs = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        self._why = "repeats an earlier slice"  # pandera reports the repeats within a slice it saw

    def add(self, keys: pd.DataFrame, trusted, offset: int) -> list[str]:
        """One slice's key columns, its rows numbered from ``offset``; the failures found in it alone."""
        # columns as lists first: iterating an Arrow-backed pandas column makes a scalar at a time
        lines = [-1 if pd.isna(n) else n for n in keys["source_line"].tolist()]  # missing: its own value
        self.ids.add(string_keys(keys["record_id"].tolist()), offset)
        self.refs.add(provenance_numbers(keys["source_file"].tolist(), lines, self._files), offset)
        if trusted is None:
            return []
        self._why = "repeats an earlier row"
        self._unseen_ids.append(np.flatnonzero(_unseen_repeats(keys, ["record_id"], trusted)) + offset)
        unseen_refs = _unseen_repeats(keys, ["source_file", "source_line"], trusted)
        self._unseen_refs.append(np.flatnonzero(unseen_refs) + offset)
        failed = np.flatnonzero(trusted & ~_dup_count_ok(keys)) + offset
        return _across("dup_count_matches_also_in", failed, "not len(also_in)")

    def found(self) -> tuple[list[str], int]:
        """The failures across slices, once every slice is in; and how many rows repeat a record_id."""
        earlier_ids, repeated = self.ids.found()
        earlier_refs, _ = self.refs.found()
        ids = np.union1d(earlier_ids, np.concatenate(self._unseen_ids))
        refs = np.union1d(earlier_refs, np.concatenate(self._unseen_refs))
        lines = _across("record_id unique", ids, self._why) + _across("provenance_unique", refs, self._why)
        return lines, repeated


def _unseen_repeats(keys: pd.DataFrame, columns: list[str], trusted: pd.Series) -> pd.Series:
    """Rows that repeat an earlier row of the slice on ``columns`` where pandera did not see the pair:
    the row is one it skipped (``trusted``), or every earlier row with its value is. A repeat between
    two rows pandera saw is its own to report (field_uniqueness, the provenance check): not twice."""
    repeats = keys.duplicated(columns)
    if not repeats.any():  # the usual case: no grouping
        return repeats
    seen = (~trusted).astype(int)
    seen_before = seen.groupby([keys[c] for c in columns], sort=False).cumsum() - seen
    return repeats & (trusted | (seen_before == 0))


KEY_COLUMNS = ["record_id", "source_file", "source_line", "dup_count", "also_in"]


def _split(piece, known: pa.Array | None):
    """(the rows pandera validates, the key columns of every row, which rows were checked before or
    ``None`` when pandera sees them all). ``known``: the source files checked before. Row labels are
    the slice's row numbers."""
    if isinstance(piece, pd.DataFrame):
        return piece, piece, None
    if known is None or "source_file" not in piece.column_names:
        frame = to_frame(piece)
        return frame, frame, None
    trusted = pc.is_in(piece["source_file"], value_set=known).to_numpy(zero_copy_only=False)
    keys = to_frame(piece.select(KEY_COLUMNS))
    frame = to_frame(piece.filter(pa.array(~trusted)))
    frame.index = keys.index[~trusted]
    return frame, keys, pd.Series(trusted, index=keys.index)


def _dup_count_ok(keys: pd.DataFrame) -> pd.Series:
    counts = keys["dup_count"]
    return (counts >= 0).fillna(False) & (counts == keys["also_in"].map(len)).fillna(False)


def _across(check: str, rows: np.ndarray, why: str) -> list[str]:
    return [f"records.*: {check} failed at row {i} ({why})" for i in rows[:50].tolist()]


def evaluate_gates(
    counts: dict[str, int],
    frames: Frames,
    policy: Policy,
    checked_before: frozenset[str] = frozenset(),
    scratch: Path | None = None,
    reasons: dict[str, int] | None = None,
) -> list[GateResult]:
    """``reasons``: quarantined rows per reason code (for the processing_error gate)."""
    g = policy.gates
    ingested = max(1, counts["ingested"])
    q_share = counts["quarantined"] / ingested
    errors = (reasons or {}).get(Reason.PROCESSING_ERROR, 0)
    # a reference's copies are expected (a new crawl repeats last year's): the share is of the run's own
    d_share = (counts["duplicates"] - counts.get("reference_duplicates", 0)) / ingested
    total = counts["kept"] + counts["duplicates"] + counts["quarantined"]
    schema, dup_ids = _validate(frames, checked_before, scratch)
    return [
        GateResult(
            "not_empty",
            counts["kept"] >= g["min_records"],
            f"{counts['kept']} records kept; the policy needs at least {g['min_records']}",
        ),
        GateResult("record_ids_unique", dup_ids == 0, f"{dup_ids} repeated record_id values"),
        GateResult(
            "accounting",
            total == counts["ingested"],
            f"ingested {counts['ingested']} = kept {counts['kept']} + duplicates {counts['duplicates']} "
            f"+ quarantined {counts['quarantined']}",
        ),
        GateResult(
            "quarantine_share",
            q_share <= g["max_quarantine_share"],
            f"{q_share:.1%} of ingested records quarantined; the policy allows "
            f"{g['max_quarantine_share']:.0%}",
        ),
        GateResult(
            "duplicate_share",
            d_share <= g["max_duplicate_share"],
            f"{d_share:.1%} of ingested records are duplicates of the run's own records; the policy "
            f"allows {g['max_duplicate_share']:.0%}",
        ),
        GateResult(
            "processing_errors",
            errors / ingested <= g["max_processing_error_share"],
            f"{errors} quarantined as processing_error ({errors / ingested:.1%} of ingested); the policy "
            f"allows {g['max_processing_error_share']:.0%}",
        ),
        GateResult(
            "schema",
            not schema,
            "all four tables match the contract"
            if not schema
            else f"{len(schema)} contract violations: " + "; ".join(schema[:5]),
        ),
    ]
