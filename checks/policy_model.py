"""The policy file's typed model (pydantic): which keys each table holds, their types and ranges.

What this adds to pydantic's own validation: errors as one line per problem that names the file, the
line and the key (``policy.toml:23: [ingest] max_fil_mb: unknown key; did you mean max_file_mb?``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import MISSING, fields
from typing import Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from corpus_hygiene.dedup.config import DedupConfig

# strict types, no unknown keys, and no infinite or NaN number anywhere
_STRICT = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
Share = Field(ge=0.0, le=1.0)


class Ingest(BaseModel):
    model_config = _STRICT
    max_file_mb: float = Field(gt=0, le=2**40)
    stream_above_mb: float = Field(64, gt=0, le=2**40)


class Record(BaseModel):
    model_config = _STRICT
    min_chars: int = Field(ge=1)
    max_chars: int = Field(ge=1)
    max_paragraph_chars: int = Field(200_000, ge=1)
    max_lost_words: int = Field(ge=0)

    @model_validator(mode="after")
    def _range(self):
        if self.min_chars >= self.max_chars:
            raise ValueError("min_chars must be below max_chars")
        if self.max_paragraph_chars < self.max_chars:
            raise ValueError("max_paragraph_chars must be at least max_chars")
        return self


class Quality(BaseModel):
    model_config = _STRICT
    min_words: float = Field(ge=0)
    min_mean_word_length: float = Field(ge=0)
    max_mean_word_length: float = Field(gt=0)
    min_alpha_share: float = Share
    min_stopword_share: float = Share
    max_repeated_ngram_share: float = Share
    max_urls: float = Field(ge=0)


class Contacts(BaseModel):
    model_config = _STRICT
    action: Literal["keep", "mask", "quarantine"]


class Checks(BaseModel):
    model_config = _STRICT
    year_min: int = Field(ge=0, le=9999)
    year_max: int = Field(ge=0, le=9999)
    repetition_min_words: int = Field(ge=1)
    min_distinct_word_ratio: float = Share
    placeholder_max_chars: int = Field(ge=0)
    placeholders: list[str]

    @model_validator(mode="after")
    def _years(self):
        if self.year_min > self.year_max:
            raise ValueError("year_min must not be above year_max")
        return self


class Gates(BaseModel):
    model_config = _STRICT
    min_records: int = Field(ge=0)
    max_quarantine_share: float = Share
    max_duplicate_share: float = Share
    max_processing_error_share: float = Field(default=0.01, ge=0.0, le=1.0)


class Reference(BaseModel):
    model_config = _STRICT
    paths: list[str] = []
    text_column: str = Field("text", min_length=1)
    contamination_ngram: int = Field(8, ge=1, le=64)
    contamination_min_words: int = Field(6, ge=1, le=10_000)
    contamination_max_words: int = Field(64, ge=1, le=10_000)
    contamination_threshold: float = Field(0.8, gt=0.0, le=1.0)


# What each dedup parameter may be (a parameter not named here takes any value of its type).
_NGRAM = {"ge": 1, "le": 8}
_DEDUP_RANGES = {
    "lsh_word_ngram": _NGRAM,
    "lsh_char_ngram": _NGRAM,
    "verify_word_ngram": _NGRAM,
    "verify_char_ngram": _NGRAM,
    "lsh_skip_common": {"ge": 0, "le": 100_000},
    "num_perm": {"ge": 16, "le": 1024},
    "bands": {"ge": 1, "le": 1024},
    "rows": {"ge": 1, "le": 1024},
    "min_candidate_jaccard": {"ge": 0.0, "le": 1.0},
    "min_candidate_jaccard_cjk": {"ge": 0.0, "le": 1.0},
    "alignment_floor": {"ge": 0.0, "le": 1.0},
    "threshold": {"gt": 0.0, "le": 1.0},
    "seed": {"ge": 0, "le": 2**32 - 1},
}


def _bands_cover_permutations(model):
    if model.bands * model.rows != model.num_perm:
        raise ValueError(f"bands × rows ({model.bands}×{model.rows}) must equal num_perm ({model.num_perm})")
    return model


def _dedup_model() -> type[BaseModel]:
    """DedupConfig's fields as a model: one definition of the dedup parameters, in dedup/config.py;
    their ranges here, where the policy is checked."""
    hints = get_type_hints(DedupConfig)
    return create_model(
        "Dedup",
        __config__=_STRICT,
        __validators__={"_bands": model_validator(mode="after")(_bands_cover_permutations)},
        **{
            f.name: (
                hints[f.name],
                Field(f.default if f.default is not MISSING else ..., **_DEDUP_RANGES.get(f.name, {})),
            )
            for f in fields(DedupConfig)
        },
    )


Dedup = _dedup_model()


class PolicyFile(BaseModel):
    model_config = _STRICT
    ingest: Ingest
    record: Record
    quality: Quality
    contacts: Contacts
    checks: Checks
    gates: Gates
    dedup: Dedup = Field(default_factory=Dedup)  # type: ignore[valid-type]
    reference: Reference = Field(default_factory=Reference)


def _models_at(loc: tuple) -> type[BaseModel] | None:
    model: type[BaseModel] = PolicyFile
    for part in loc:
        field = model.model_fields.get(str(part))
        if (
            field is None
            or not isinstance(field.annotation, type)
            or not issubclass(field.annotation, BaseModel)
        ):
            return model
        model = field.annotation
    return model


def _line_of(text: str, section: str | None, key: str | None) -> int | None:
    """The 1-based line of ``key`` in ``[section]`` (of the section header when no key)."""
    lines = text.splitlines()
    start = 0
    if section is not None:
        header = re.compile(rf"^\s*\[\s*{re.escape(section)}\s*\]")
        found = next((i for i, line in enumerate(lines) if header.match(line)), None)
        if found is None:
            return None
        start = found
        if key is None:
            return found + 1
    pattern = re.compile(rf"^\s*{re.escape(key or '')}\s*=")
    for i in range(start, len(lines)):
        if i > start and lines[i].lstrip().startswith("["):
            break
        if pattern.match(lines[i]):
            return i + 1
    return start + 1 if section is not None else None


def describe(errors: ValidationError, text: str, path: str) -> list[str]:
    """One line per problem: ``path:line: [section] key: what is wrong``."""
    out = []
    # an unknown key first: a misspelt key is also reported missing under its right name
    for err in sorted(errors.errors(), key=lambda e: e["type"] != "extra_forbidden"):
        loc = tuple(str(p) for p in err["loc"])
        section = loc[0] if loc else None
        key = loc[1] if len(loc) > 1 else None
        where = f"[{section}] {key}" if key else f"[{section}]"
        if err["type"] == "extra_forbidden":
            model = _models_at(loc[:-1])
            close = difflib.get_close_matches(loc[-1], list(model.model_fields) if model else [], n=1)
            what = "unknown key" if key else "unknown table"
            if not key:
                close = difflib.get_close_matches(section, list(PolicyFile.model_fields), n=1)
            message = f"{what}" + (f"; did you mean {close[0]}?" if close else "")
        elif err["type"] == "missing":
            message = "missing"
        elif isinstance(err.get("input"), dict):  # a check across the table's keys
            message = err["msg"].removeprefix("Value error, ")
        else:
            message = f"{err['msg']} (got {err.get('input')!r})"
        line = _line_of(text, section, key if err["type"] != "missing" else None)
        out.append(f"{path}:{line or '?'}: {where}: {message}")
    return out
