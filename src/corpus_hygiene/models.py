"""The record types every stage agrees on (frozen dataclasses; no ad-hoc dict keys)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from pathlib import Path


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A regular file found under the input root, not yet read."""

    rel_path: str  # relative to the input root, "/" separators: the record identity's first half
    abs_path: Path
    size: int
    mtime_ns: int | None = None  # when discovered: a file whose size or mtime differs later changed mid-run


@dataclass(frozen=True, slots=True)
class Rejected:
    """Anything that does not reach the clean dataset for a reason other than being a duplicate."""

    source_file: str
    source_line: int | None  # None for a whole file
    reason: str
    detail: str
    text_raw: str | None = None


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    encoding: str  # Python codec name, e.g. "utf_8", "utf_16", "gb18030", "cp1252"
    confidence: float  # 1.0 for a BOM or strict UTF-8; charset detection's own figure otherwise
    repairs: tuple[str, ...] = ()  # byte-level repairs made while decoding, in order


@dataclass(frozen=True, slots=True)
class Header:
    line: int
    text: str  # the line as read, stripped
    venue: str | None
    year: int | None
    label: str  # what is left once venue and year are taken out ("Papers", "论文列表")
    label_lang: str  # ISO 639-1 or "und"


@dataclass(frozen=True, slots=True)
class Paragraph:
    line: int  # 1-based line of its first line in the decoded text
    text: str  # its lines joined with "\n", as decoded (only the start of an oversized one)
    n_chars: int | None = None  # set when the paragraph was longer than the limit: its full length


@dataclass(frozen=True, slots=True)
class Cleaned:
    text: str
    fixes: tuple[str, ...]  # the fixes that changed the text, in the order applied
    lost: tuple[str, ...] = ()  # words cleaning removed that were not markup (clean.loss)


@dataclass(frozen=True, slots=True)
class Record:
    """A paragraph that passed ingestion: cleaned, enriched, not yet deduplicated."""

    source_file: str
    source_line: int
    venue: str | None
    year: int | None
    header_label: str
    header_lang: str
    text: str
    text_raw: str
    lang: str
    lang_confidence: float
    fixes: tuple[str, ...]
    record_id: str  # dedup.keys.record_id of the exact-duplicate key (the key itself is not kept)
    # signals.signals_of the text: the quality signals the policy's [quality] limits read
    n_words: int = 0
    mean_word_length: float = 0.0
    alpha_share: float = 0.0
    stopword_share: float | None = None
    repeated_ngram_share: float = 0.0
    n_urls: int = 0
    n_emails: int = 0
    n_phones: int = 0
    lost_words: tuple[str, ...] = ()  # clean.loss: words cleaning removed that were not markup
    signature: bytes = b""  # MinHash of the LSH shingles (uint32 little-endian), when computed per file
    text_key: bytes = b""  # dedup.memo.text_key of the text (the memo's name for it), computed with it

    @property
    def ref(self) -> str:
        return f"{self.source_file}:{self.source_line}"

    @property
    def n_fixes(self) -> int:
        return len(self.fixes)

    @property
    def n_chars(self) -> int:
        return len(self.text)


# A Record pickles as its constructor's arguments: every record a Dask worker makes travels to the flow
# by pickle, and the dataclass default for a slots class builds a list per record through ``fields()``
# (about twice the pickling work).
_RECORD_VALUES = attrgetter(*(f.name for f in fields(Record)))
Record.__reduce__ = lambda rec: (Record, _RECORD_VALUES(rec))  # type: ignore[method-assign]


@dataclass(slots=True)
class SourceReport:
    """What happened to one input file: shown per file in the report and kept in the manifest."""

    source_file: str
    size: int
    sha256: str | None = None
    encoding: str | None = None
    confidence: float | None = None
    decode_repairs: tuple[str, ...] = ()
    header: Header | None = None
    n_lines: int = 0
    n_paragraphs: int = 0  # paragraphs after the header (the records this file contributes)
    problem: str | None = None  # file-level reason code when the file was refused as a whole
    problem_detail: str | None = None
    cached: bool = False  # served from the per-file cache of an earlier run


@dataclass(slots=True)
class FileResult:
    source: SourceReport
    records: list[Record] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    checked: bool = False  # the record checks of checks/ have run: failures are in ``rejected``
