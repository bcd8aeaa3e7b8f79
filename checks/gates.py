"""Dataset gates: whole-run conditions that decide whether a dataset is published at all."""

from __future__ import annotations

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


def schema_failures(frames: dict[str, pd.DataFrame]) -> list[str]:
    """Every contract violation in the three tables, one line each (empty when all conform)."""
    lines = []
    for name, model in TABLE_MODELS.items():
        try:
            model.validate(frames[name], lazy=True)
        except pandera.errors.SchemaErrors as errors:
            cases = errors.failure_cases
            for _, case in cases.head(50).iterrows():
                where = f"row {int(case['index'])}" if pd.notna(case["index"]) else "table"
                lines.append(
                    f"{name}.{case['column'] or '*'}: {case['check']} failed at {where} "
                    f"(value {str(case['failure_case'])[:60]!r})"
                )
            if len(cases) > 50:
                lines.append(f"{name}: … {len(cases) - 50} more failures")
    return lines


def evaluate_gates(
    counts: dict[str, int], frames: dict[str, pd.DataFrame], policy: Policy
) -> list[GateResult]:
    g = policy.gates
    ingested = max(1, counts["ingested"])
    records = frames["records"]
    q_share = counts["quarantined"] / ingested
    d_share = counts["duplicates"] / ingested
    total = counts["kept"] + counts["duplicates"] + counts["quarantined"]
    dup_ids = int(records["record_id"].duplicated().sum()) if len(records) else 0
    schema = schema_failures(frames)
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
