"""pandera models of the output contract (publish.dataset.SCHEMA_VERSION), and the record-checks schema.

The three table models describe what ``records.parquet``, ``duplicates.parquet`` and
``quarantine.parquet`` hold; ``record_checks_schema(policy)`` is the DataFrame-level schema of named
domain checks (checks/domain.py) with the policy's values, run lazily over candidate records.
"""

from __future__ import annotations

import sys
import types


def _no_dask_frames() -> None:
    """Tell pandera that dask is absent. Where dask is installed (prefect-dask installs it), pandera
    imports dask.dataframe at a process's first validation, to accept dask frames too, a cost paid in
    every process that validates. No table here is a dask frame. A process that imported pandera's
    dask types before keeps them."""
    if "pandera.typing.dask" not in sys.modules:
        absent = types.ModuleType("pandera.typing.dask", "dask not used with pandera here")
        absent.DASK_INSTALLED = False
        sys.modules["pandera.typing.dask"] = absent


_no_dask_frames()

import pandas as pd  # noqa: E402
import pandera.pandas as pa  # noqa: E402
from pandera.typing import Series  # noqa: E402

from corpus_hygiene.checks.domain import (  # noqa: E402
    INVISIBLE,
    ISO_639_1,
    MOJIBAKE_RESIDUE,
    RECORD_CHECKS,
    has_latex_residue,
    register_with_pandera,
)

REF = r"^.+:\d+$"  # source_file:line


class RecordsModel(pa.DataFrameModel):
    """One row per kept canonical record."""

    record_id: Series[str] = pa.Field(unique=True, str_matches=r"^[0-9a-f]{32}$")
    source_file: Series[str] = pa.Field(str_length={"min_value": 1})
    source_line: Series[pd.Int32Dtype] = pa.Field(ge=1)
    venue: Series[str] = pa.Field(nullable=True)
    year: Series[pd.Int32Dtype] = pa.Field(nullable=True, ge=1000, le=9999)
    header_label: Series[str]
    header_lang: Series[str] = pa.Field(isin=sorted(ISO_639_1))
    text: Series[str] = pa.Field(str_length={"min_value": 1})
    text_raw: Series[str]
    lang: Series[str] = pa.Field(isin=sorted(ISO_639_1))
    lang_confidence: Series[float] = pa.Field(ge=0.0, le=1.0)
    n_chars: Series[pd.Int32Dtype] = pa.Field(ge=1)
    n_words: Series[pd.Int32Dtype] = pa.Field(ge=0)
    mean_word_length: Series[float] = pa.Field(ge=0.0)
    alpha_share: Series[float] = pa.Field(ge=0.0, le=1.0)
    stopword_share: Series[float] = pa.Field(nullable=True, ge=0.0, le=1.0)
    repeated_ngram_share: Series[float] = pa.Field(ge=0.0, le=1.0)
    n_urls: Series[pd.Int32Dtype] = pa.Field(ge=0)
    pii: Series[object]
    fixes: Series[object]
    lost_words: Series[object]
    dup_count: Series[pd.Int32Dtype] = pa.Field(ge=0)
    also_in: Series[object]

    @pa.check("text", name="no_latex_residue")
    def _no_latex(cls, s: Series[str]) -> Series[bool]:
        return ~has_latex_residue(s)

    @pa.check("text", name="no_mojibake_residue")
    def _no_mojibake(cls, s: Series[str]) -> Series[bool]:
        return ~s.str.contains(MOJIBAKE_RESIDUE, regex=True)

    @pa.check("text", name="no_invisible_chars")
    def _no_invisible(cls, s: Series[str]) -> Series[bool]:
        return ~s.str.contains(INVISIBLE, regex=True)

    @pa.check("text", name="nfc_single_spaces")
    def _normalised(cls, s: Series[str]) -> Series[bool]:
        import unicodedata

        return s.map(lambda t: unicodedata.is_normalized("NFC", t) and "  " not in t and t == t.strip())

    @pa.dataframe_check(name="n_chars_matches_text")
    def _n_chars(cls, df: pd.DataFrame) -> Series[bool]:
        return df["n_chars"] == df["text"].str.len()

    @pa.dataframe_check(name="dup_count_matches_also_in")
    def _dup_count(cls, df: pd.DataFrame) -> Series[bool]:
        return df["dup_count"] == df["also_in"].map(len)

    @pa.dataframe_check(name="provenance_unique")
    def _provenance(cls, df: pd.DataFrame) -> Series[bool]:
        return ~df.duplicated(["source_file", "source_line"], keep=False)

    class Config:
        strict = True
        coerce = False


class DuplicatesModel(pa.DataFrameModel):
    """One row per dropped duplicate, pointing at the record it duplicates."""

    source_file: Series[str] = pa.Field(str_length={"min_value": 1})
    source_line: Series[pd.Int32Dtype] = pa.Field(ge=1)
    canonical_id: Series[str] = pa.Field(str_matches=r"^[0-9a-f]{32}$")
    canonical_ref: Series[str] = pa.Field(str_matches=REF)
    kind: Series[str] = pa.Field(isin=["exact", "near"])
    similarity: Series[float] = pa.Field(ge=0.0, le=1.0)
    reason: Series[str] = pa.Field(str_length={"min_value": 1})
    text_raw: Series[str]

    @pa.dataframe_check(name="exact_means_similarity_1")
    def _exact(cls, df: pd.DataFrame) -> Series[bool]:
        return (df["kind"] != "exact") | (df["similarity"] == 1.0)

    class Config:
        strict = True


class QuarantineModel(pa.DataFrameModel):
    """One row per rejected record (source_line set) or unreadable file (source_line null)."""

    source_file: Series[str] = pa.Field(str_length={"min_value": 1})
    source_line: Series[pd.Int32Dtype] = pa.Field(nullable=True, ge=1)
    reason: Series[str] = pa.Field(str_matches=r"^[a-z0-9_]+$")
    detail: Series[str] = pa.Field(str_length={"min_value": 1})
    text_raw: Series[str] = pa.Field(nullable=True)

    class Config:
        strict = True


class PairsModel(pa.DataFrameModel):
    """One row per verified near-duplicate pair, merged or not."""

    source_file: Series[str] = pa.Field(str_length={"min_value": 1})
    source_line: Series[pd.Int32Dtype] = pa.Field(ge=1)
    record_id: Series[str] = pa.Field(str_matches=r"^[0-9a-f]{32}$")
    candidate_id: Series[str] = pa.Field(str_matches=r"^[0-9a-f]{32}$")
    candidate_ref: Series[str] = pa.Field(str_matches=REF)
    similarity: Series[float] = pa.Field(ge=0.0, le=1.0)
    merged: Series[bool]

    class Config:
        strict = True


TABLE_MODELS = {
    "records": RecordsModel,
    "duplicates": DuplicatesModel,
    "quarantine": QuarantineModel,
    "pairs": PairsModel,
}


def record_checks_schema(params: dict) -> pa.DataFrameSchema:
    """The named domain checks, with the policy's values, as one DataFrame-level schema."""
    register_with_pandera()
    checks = [getattr(pa.Check, c.name)(**{k: params[k] for k in c.params}) for c in RECORD_CHECKS]
    return pa.DataFrameSchema(checks=checks, name="record_checks")
