"""Dataset gates: whole-run conditions that decide whether a dataset is published at all."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pandera.errors
import pyarrow as pa
import pyarrow.compute as pc

from corpus_hygiene.checks import Policy
from corpus_hygiene.checks.schemas import TABLE_MODELS
from corpus_hygiene.dedup.exact import lookup
from corpus_hygiene.pipeline.rows import provenance_numbers, string_keys


@dataclass(frozen=True, slots=True)
class GateResult:
    name: str
    passed: bool
    detail: str


Frames = Mapping[str, "pd.DataFrame | Iterable[pd.DataFrame | pa.Table]"]  # a table whole, or in slices


def _slices(table) -> Iterable:
    return [table] if isinstance(table, pd.DataFrame | pa.Table) else table


class _Seen:
    """The values of the slices before, as one sorted numpy array of keys (``rows.string_keys``): a new
    slice is looked up by binary search and then merged in, so a slice costs its own size and one copy
    of the array, not a scan of every earlier value; a Python set would hold an object a value."""

    def __init__(self, keys: Callable[[Sequence], np.ndarray] = string_keys) -> None:
        self._keys, self._sorted = keys, keys([])

    def add(self, values) -> np.ndarray:
        """Which of ``values`` an earlier slice holds; then they are held too."""
        keys = self._keys(values)
        found = lookup(self._sorted, keys)[0]
        keys.sort()
        self._sorted = np.insert(self._sorted, np.searchsorted(self._sorted, keys), keys)
        return found


class _SeenProvenances(_Seen):
    """Provenances as one int64 each (the file's number in this table, then the line): a path a row
    would hold the table's paths over again."""

    def __init__(self) -> None:
        super().__init__(lambda values: np.asarray(values, np.int64))
        self._files: dict[str, int] = {}

    def add_rows(self, files: list, lines: list) -> np.ndarray:
        lines = [-1 if pd.isna(line) else line for line in lines]  # a missing line: one value of its own
        return self.add(provenance_numbers(files, lines, self._files))


def schema_failures(frames: Frames) -> list[str]:
    """Every contract violation in the four tables, one line each (empty when all conform)."""
    return _validate(frames)[0]


def _validate(frames: Frames, checked_before: frozenset[str] = frozenset()) -> tuple[list[str], int]:
    """The contract violations, and how many record_id values repeat. A table given in slices is
    validated a slice at a time; the two checks that span rows (record_id unique, one row per
    provenance) are then also made across slices.

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
        ids, refs = _Seen(), _SeenProvenances()
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
            if name == "records" and len(keys):
                more, repeats = _across_rows(keys, trusted, ids, refs, offset)
                lines += more
                repeated_ids += repeats
            offset += len(keys)
            del piece, frame, keys  # not alive while the next slice is made
        if found > 50:
            lines.append(f"{name}: … {found - 50} more failures")
    return lines, repeated_ids


def _across_rows(
    keys: pd.DataFrame, trusted, ids: _Seen, refs: _SeenProvenances, offset: int
) -> tuple[list[str], int]:
    """The checks that span rows, for one slice's key columns against the slices before (``ids`` and
    ``refs`` grow): record_id unique, one row per provenance; and, where pandera saw only some rows
    (``trusted`` is not None), repeats within the slice and dup_count of the rows it did not see."""
    # columns as lists first: iterating an Arrow-backed pandas column makes a scalar at a time
    files, source_lines = keys["source_file"].tolist(), keys["source_line"].tolist()
    earlier = pd.Series(ids.add(keys["record_id"].tolist()), index=keys.index)
    repeated = int((keys["record_id"].duplicated() | earlier).sum())
    seen = pd.Series(refs.add_rows(files, source_lines), index=keys.index)
    if trusted is None:  # within the slice, pandera saw the repeats
        return _across("record_id unique", earlier, offset) + _across(
            "provenance_unique", seen, offset
        ), repeated
    earlier |= _unseen_repeats(keys, ["record_id"], trusted)
    seen |= _unseen_repeats(keys, ["source_file", "source_line"], trusted)
    lines = _across("dup_count_matches_also_in", trusted & ~_dup_count_ok(keys), offset, "not len(also_in)")
    lines += _across("record_id unique", earlier, offset, "repeats an earlier row")
    lines += _across("provenance_unique", seen, offset, "repeats an earlier row")
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
    from corpus_hygiene.publish.dataset import to_frame

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


def _across(check: str, failed: pd.Series, offset: int, why: str = "repeats an earlier slice") -> list[str]:
    return [f"records.*: {check} failed at row {i + offset} ({why})" for i in
            failed[failed.to_numpy()].index[:50]]  # fmt: skip


def evaluate_gates(
    counts: dict[str, int], frames: Frames, policy: Policy, checked_before: frozenset[str] = frozenset()
) -> list[GateResult]:
    g = policy.gates
    ingested = max(1, counts["ingested"])
    q_share = counts["quarantined"] / ingested
    d_share = counts["duplicates"] / ingested
    total = counts["kept"] + counts["duplicates"] + counts["quarantined"]
    schema, dup_ids = _validate(frames, checked_before)
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
            f"{d_share:.1%} of ingested records are duplicates; the policy allows "
            f"{g['max_duplicate_share']:.0%}",
        ),
        GateResult(
            "schema",
            not schema,
            "all four tables match the contract"
            if not schema
            else f"{len(schema)} contract violations: " + "; ".join(schema[:5]),
        ),
    ]


def gate_and_stage(asm, policy: Policy, staged=None, checked_before: frozenset[str] = frozenset()):
    """The gates over the assembled tables, a slice at a time, each slice also written to the ``staged``
    version's Parquet file (``publish.dataset.staged_slices``). When writing fails, the staged version
    is discarded and the gates read the rows alone (publishing then writes the tables)."""
    from corpus_hygiene.publish.dataset import staged_slices

    tables = asm.tables()
    if staged is not None:
        try:
            return evaluate_gates(asm.counts, staged_slices(tables, staged), policy, checked_before)
        except OSError:
            staged.discard()
    return evaluate_gates(asm.counts, staged_slices(tables, None), policy, checked_before)
