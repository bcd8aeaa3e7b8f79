"""Row-level routing: run the named checks lazily over candidate records; failures go to quarantine."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pandera.errors

from checks import Policy
from checks.domain import CHECKS_BY_NAME, RECORD_CHECKS
from checks.schemas import record_checks_schema
from corpus_hygiene.signals import SIGNAL_COLUMNS
from corpus_hygiene.store.rows import string_array

CANDIDATE_COLUMNS = (
    "text",
    "lang",
    "year",
    "venue",
    "header_label",
    "n_chars",
    "lost_words",
    *SIGNAL_COLUMNS,
    "pii",
)


@dataclass(frozen=True, slots=True)
class Failure:
    index: int  # row position in the candidate frame
    reason: str  # the check's name
    detail: str  # a sentence for people; names the other failed checks too


def candidate_frame(rows: list[dict]) -> pd.DataFrame:
    texts = string_array([r["text"] for r in rows]).to_pandas()  # no UTF-8 copy left on the records
    frame = pd.DataFrame({c: texts if c == "text" else [r[c] for r in rows] for c in CANDIDATE_COLUMNS})
    frame["year"] = frame["year"].astype("Int32")
    frame["n_chars"] = frame["n_chars"].astype("int64")
    frame["stopword_share"] = frame["stopword_share"].astype("Float64")  # null: no list for the language
    return frame


def route(frame: pd.DataFrame, policy: Policy) -> list[Failure]:
    """Validate every row against every check at once (lazy); one Failure per failing row."""
    if frame.empty:
        return []
    params = policy.check_params()
    try:
        record_checks_schema(params).validate(frame, lazy=True)
        return []
    except pandera.errors.SchemaErrors as errors:
        cases = errors.failure_cases
    failed: dict[int, list[str]] = {}
    for name, index in zip(cases["check"], cases["index"], strict=True):
        if pd.isna(index):
            continue
        check_name = str(name).split("(")[0]
        if check_name in CHECKS_BY_NAME:
            failed.setdefault(int(index), []).append(check_name)
    order = {c.name: i for i, c in enumerate(RECORD_CHECKS)}
    out = []
    for index in sorted(failed):
        names = sorted(set(failed[index]), key=order.__getitem__)
        check = CHECKS_BY_NAME[names[0]]
        row = frame.iloc[index]
        detail = check.detail(row, **{k: params[k] for k in check.params})
        if len(names) > 1:
            detail += f" (also failed: {', '.join(names[1:])})"
        out.append(Failure(index, names[0], detail))
    return out
