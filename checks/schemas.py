"""The output contract's tables, declared once: a pandera model per table, each column with its type,
nullability, checks and meaning. The Parquet schemas (``TABLES``), ``schema.json`` and the dataset
card's column table are derived from the models.

``record_checks_schema(policy)`` is the DataFrame-level schema of named domain checks
(checks/domain.py) with the policy's values, run lazily over candidate records.
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
import pyarrow  # noqa: E402
from pandera.typing import Series  # noqa: E402

from checks.domain import (  # noqa: E402
    INVISIBLE,
    ISO_639_1,
    MOJIBAKE_RESIDUE,
    RECORD_CHECKS,
    has_latex_residue,
    register_with_pandera,
)

SCHEMA_VERSION = 3
REF = r"^.+:\d+$"  # source_file:line
ROW = r"^.+#\d+$"  # a reference's file#row
RECORD_ID = r"^[0-9a-f]{32}$"
# the Arrow types of the columns pandas holds as objects
PII_TYPE = pyarrow.struct(
    [
        pyarrow.field("email", pyarrow.int32(), nullable=False),
        pyarrow.field("phone", pyarrow.int32(), nullable=False),
    ]
)
STRINGS = pyarrow.list_(pyarrow.string())


class RecordsModel(pa.DataFrameModel):
    """One row per kept canonical record."""

    record_id: Series[str] = pa.Field(
        unique=True,
        str_matches=r"^[0-9a-f]{32}$",
        description="stable id: 128-bit hash (hex) of the dedup key (NFKC, case-folded, letters and digits)",
    )
    source_file: Series[str] = pa.Field(
        str_length={"min_value": 1},
        description="path of the source file relative to the input folder, '/' separators",
    )
    source_line: Series[pd.Int32Dtype] = pa.Field(
        ge=1, description="1-based line of the paragraph's first line in the decoded file (LF, CRLF, CR)"
    )
    venue: Series[str] = pa.Field(
        nullable=True, description="venue named by the file's header line (e.g. ICLR)"
    )
    year: Series[pd.Int32Dtype] = pa.Field(
        nullable=True, ge=1000, le=9999, description="year named by the file's header line"
    )
    header_label: Series[str] = pa.Field(
        description="the rest of the header line (e.g. 'Papers', '论文列表')"
    )
    header_lang: Series[str] = pa.Field(
        isin=sorted(ISO_639_1), description="ISO 639-1 language of the header label, or 'und'"
    )
    text: Series[str] = pa.Field(
        str_length={"min_value": 1},
        description="the cleaned abstract: NFC Unicode, single spaces, markup and mojibake repaired",
    )
    text_raw: Series[str] = pa.Field(description="the paragraph as decoded, line breaks kept")
    lang: Series[str] = pa.Field(
        isin=sorted(ISO_639_1), description="ISO 639-1 language of the abstract, or 'und'"
    )
    lang_confidence: Series[float] = pa.Field(
        ge=0.0, le=1.0, description="confidence of the language decision, 0..1"
    )
    n_chars: Series[pd.Int32Dtype] = pa.Field(ge=1, description="characters in text")
    n_words: Series[pd.Int32Dtype] = pa.Field(
        ge=0, description="words in text (each Chinese or Japanese character counts as one)"
    )
    mean_word_length: Series[float] = pa.Field(
        ge=0.0, description="characters per word (words as in n_words)"
    )
    alpha_share: Series[float] = pa.Field(
        ge=0.0, le=1.0, description="letters among the non-space characters of text, 0..1"
    )
    stopword_share: Series[float] = pa.Field(
        nullable=True,
        ge=0.0,
        le=1.0,
        description="share of the words among the language's 100 most frequent (wordfreq); null when "
        "wordfreq has no list for the language",
    )
    repeated_ngram_share: Series[float] = pa.Field(
        ge=0.0, le=1.0, description="share of the words covered by the repeats of the longest repeated n-gram"
    )
    n_urls: Series[pd.Int32Dtype] = pa.Field(ge=0, description="links (http://, https://, www.) in text")
    pii: Series[object] = pa.Field(
        metadata={"arrow": PII_TYPE},
        description="contact details in text, counted, never copied: {email: n, phone: n} (phones in "
        "international form)",
    )
    fixes: Series[object] = pa.Field(
        metadata={"arrow": STRINGS},
        description="the repairs applied to text_raw, in order; 'dropped_text' when cleaning removed words "
        "that were not markup",
    )
    lost_words: Series[object] = pa.Field(
        metadata={"arrow": STRINGS},
        description="the words cleaning removed that were not markup (up to the policy's max_lost_words)",
    )
    dup_count: Series[pd.Int32Dtype] = pa.Field(
        ge=0, description="number of duplicates merged into this record"
    )
    also_in: Series[object] = pa.Field(
        metadata={"arrow": STRINGS}, description="source_file:line of every duplicate merged into this record"
    )

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
    """One row per dropped duplicate, pointing at the record it duplicates: a kept record, or a
    reference's row (kind 'reference')."""

    source_file: Series[str] = pa.Field(str_length={"min_value": 1}, description="where the dropped copy was")
    source_line: Series[pd.Int32Dtype] = pa.Field(ge=1, description="its first line")
    canonical_id: Series[str] = pa.Field(
        nullable=True,
        description="record_id of the kept copy in records.parquet; for kind 'reference', the reference "
        "row's id (its record_id or id column; null when it has neither)",
    )
    canonical_ref: Series[str] = pa.Field(
        description="source_file:line of the kept copy; for kind 'reference', file#row (0-based) in the "
        "reference"
    )
    kind: Series[str] = pa.Field(
        isin=["exact", "near", "reference"],
        description="'exact' (same dedup key), 'near' (verified similarity at or above the threshold) or "
        "'reference' (an exact or near copy of a row of the reference named in 'reference')",
    )
    similarity: Series[float] = pa.Field(
        ge=0.0, le=1.0, description="verified similarity to the kept copy or reference row (1.0 for exact)"
    )
    reason: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="why the kept copy was chosen over this one"
    )
    reference: Series[str] = pa.Field(
        nullable=True, description="for kind 'reference': the reference, as the run named it (path)"
    )
    text_raw: Series[str] = pa.Field(description="the dropped copy as decoded")

    @pa.dataframe_check(name="exact_means_similarity_1")
    def _exact(cls, df: pd.DataFrame) -> Series[bool]:
        return (df["kind"] != "exact") | (df["similarity"] == 1.0)

    @pa.dataframe_check(name="pointer_of_its_kind")
    def _pointer(cls, df: pd.DataFrame) -> Series[bool]:
        """A kept copy: its id and source_file:line; a reference row: the reference and its file#row."""
        ours = df["kind"] != "reference"
        kept = df["canonical_id"].fillna("").str.fullmatch(RECORD_ID) & df["canonical_ref"].str.fullmatch(REF)
        theirs = df["reference"].notna() & df["canonical_ref"].str.fullmatch(ROW)
        return (ours & kept & df["reference"].isna()) | (~ours & theirs)

    class Config:
        strict = True


class QuarantineModel(pa.DataFrameModel):
    """One row per rejected record (source_line set) or unreadable file (source_line null)."""

    source_file: Series[str] = pa.Field(str_length={"min_value": 1}, description="the file")
    source_line: Series[pd.Int32Dtype] = pa.Field(
        nullable=True, ge=1, description="the record's first line; null when the whole file was refused"
    )
    reason: Series[str] = pa.Field(
        str_matches=r"^[a-z0-9_]+$",
        description="reason code: a file-level code or the name of the failed check",
    )
    detail: Series[str] = pa.Field(str_length={"min_value": 1}, description="what was wrong, in a sentence")
    text_raw: Series[str] = pa.Field(
        nullable=True, description="the record as decoded (null for a whole file)"
    )

    class Config:
        strict = True


class PairsModel(pa.DataFrameModel):
    """One row per verified near-duplicate pair, merged or not."""

    source_file: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="where the record checked was"
    )
    source_line: Series[pd.Int32Dtype] = pa.Field(ge=1, description="its first line")
    record_id: Series[str] = pa.Field(
        str_matches=r"^[0-9a-f]{32}$",
        description="record_id of the record checked (in records.parquet when it was kept)",
    )
    candidate_id: Series[str] = pa.Field(
        str_matches=r"^[0-9a-f]{32}$",
        description="record_id of the earlier canonical record it was compared with",
    )
    candidate_ref: Series[str] = pa.Field(str_matches=REF, description="source_file:line of that record")
    similarity: Series[float] = pa.Field(
        ge=0.0,
        le=1.0,
        description="verified similarity of the two texts (the near-duplicate threshold decides)",
    )
    merged: Series[bool] = pa.Field(
        description="true when this pair made the record a near duplicate of the candidate"
    )

    class Config:
        strict = True


TABLE_MODELS = {
    "records": RecordsModel,
    "duplicates": DuplicatesModel,
    "quarantine": QuarantineModel,
    "pairs": PairsModel,
}

_ARROW = {
    "str": pyarrow.string(),
    "string": pyarrow.string(),
    "Int32": pyarrow.int32(),
    "float64": pyarrow.float64(),
    "bool": pyarrow.bool_(),
}


def arrow_schema(model: type[pa.DataFrameModel]) -> pyarrow.Schema:
    """A table's Parquet schema from its model: each column's dtype (or the ``arrow`` type of its
    metadata, for list and struct columns) and nullability, in the model's order."""
    columns = model.to_schema().columns.values()
    return pyarrow.schema(
        pyarrow.field(
            c.name, (c.metadata or {}).get("arrow") or _ARROW[str(c.dtype).split("[")[0]], c.nullable
        )
        for c in columns
    )


TABLES = {name: arrow_schema(model) for name, model in TABLE_MODELS.items()}
DESCRIPTIONS = {
    name: {c.name: c.description for c in model.to_schema().columns.values()}
    for name, model in TABLE_MODELS.items()
}


def to_frame(table: pyarrow.Table) -> pd.DataFrame:
    """Arrow → pandas with nullable integers (a null year stays <NA>, not a float NaN)."""
    return table.to_pandas(types_mapper={pyarrow.int32(): pd.Int32Dtype()}.get)


def record_checks_schema(params: dict) -> pa.DataFrameSchema:
    """The named domain checks, with the policy's values, as one DataFrame-level schema."""
    register_with_pandera()
    checks = [getattr(pa.Check, c.name)(**{k: params[k] for k in c.params}) for c in RECORD_CHECKS]
    return pa.DataFrameSchema(checks=checks, name="record_checks")
