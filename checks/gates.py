"""Dataset gates: whole-run conditions that decide whether a dataset is published at all."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd
import pandera.errors

from corpus_hygiene.checks import Policy
from corpus_hygiene.checks.schemas import TABLE_MODELS


@dataclass(frozen=True, slots=True)
class GateResult:
    name: str
    passed: bool
    detail: str


Frames = Mapping[str, "pd.DataFrame | Iterable[pd.DataFrame]"]  # a table whole, or in slices


def _slices(table) -> Iterable[pd.DataFrame]:
    return [table] if isinstance(table, pd.DataFrame) else table


def schema_failures(frames: Frames) -> list[str]:
    """Every contract violation in the three tables, one line each (empty when all conform)."""
    return _validate(frames)[0]


def _validate(frames: Frames) -> tuple[list[str], int]:
    """The contract violations, and how many record_id values repeat. A table given in slices is
    validated a slice at a time; the two checks that span rows (record_id unique, one row per
    provenance) are then also made across slices."""
    lines: list[str] = []
    repeated_ids = 0
    for name, model in TABLE_MODELS.items():
        offset, found = 0, 0
        ids: set[str] = set()
        refs: set[tuple[str, int]] = set()
        for frame in _slices(frames[name]):
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
            if name == "records" and len(frame):
                # a set lookup per row: Series.isin(ids) turned the whole growing set into Arrow scalars
                # one by one for every slice (400k records: 6 s of the gates' 21; ~40 s at 1M)
                earlier = pd.Series([r in ids for r in frame["record_id"].tolist()], index=frame.index)
                repeated_ids += int((frame["record_id"].duplicated() | earlier).sum())
                pairs = list(zip(frame["source_file"], frame["source_line"], strict=True))
                # within a slice pandera saw repeats; across slices only these sets do
                lines += _across("record_id unique", earlier, offset)
                lines += _across("provenance_unique", pd.Series([r in refs for r in pairs]), offset)
                ids.update(frame["record_id"])
                refs.update(pairs)
            offset += len(frame)
        if found > 50:
            lines.append(f"{name}: … {found - 50} more failures")
    return lines, repeated_ids


def warm_up() -> None:
    """Validate an empty table of each kind. A process's first validation costs ~0.9 s (pandera builds
    the schemas and imports dask.dataframe for its type lists; the next one takes 0.05 s): the CLI pays
    it while it waits for Prefect's server, not in the gates."""
    from corpus_hygiene.dataset import rows_to_frame

    schema_failures({name: rows_to_frame([], name) for name in TABLE_MODELS})


def _across(check: str, repeated: pd.Series, offset: int) -> list[str]:
    return [f"records.*: {check} failed at row {i + offset} (repeats an earlier slice)" for i in
            repeated[repeated.to_numpy()].index[:50]]  # fmt: skip


def evaluate_gates(counts: dict[str, int], frames: Frames, policy: Policy) -> list[GateResult]:
    g = policy.gates
    ingested = max(1, counts["ingested"])
    q_share = counts["quarantined"] / ingested
    d_share = counts["duplicates"] / ingested
    total = counts["kept"] + counts["duplicates"] + counts["quarantined"]
    schema, dup_ids = _validate(frames)
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
            "all three tables match the contract"
            if not schema
            else f"{len(schema)} contract violations: " + "; ".join(schema[:5]),
        ),
    ]
