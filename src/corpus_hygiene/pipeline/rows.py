"""The records table's rows without a dict per row.

The dataset's records table is the kept records (in provenance order) plus two columns the dedup step
sets: ``dup_count`` and ``also_in``. ``RecordRows`` holds exactly that, and gives a column as a list
(``column``), a range of rows as Arrow (``arrow``: column by column, for the Parquet file and the
gates), and a row as a dict only when one is asked for (indexing, iteration): building a dict per
record and converting the dicts to Arrow costs about twice the column-by-column conversion.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from operator import attrgetter

import pyarrow as pa

from corpus_hygiene.models import Record
from corpus_hygiene.signals import SIGNAL_COLUMNS

# the records table's columns that are not fields of a Record, and how each is made
_DERIVED = ("n_chars", "pii", "dup_count", "also_in")


class RecordRows(Sequence):
    """``records`` (already in the table's order) and, by position, the refs of the duplicates each
    stands for (``also_in``, sorted; positions without duplicates are absent)."""

    __slots__ = ("_records", "_also_in")

    def __init__(self, records: list[Record], also_in: Mapping[int, list[str]]) -> None:
        self._records = records
        self._also_in = also_in

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._row(j) for j in range(*i.indices(len(self)))]
        return self._row(range(len(self))[i])

    def __iter__(self) -> Iterator[dict]:
        return map(self._row, range(len(self)))

    def _row(self, i: int) -> dict:
        rec, also = self._records[i], self._also_in.get(i, ())
        return {
            "record_id": rec.record_id,
            "source_file": rec.source_file,
            "source_line": rec.source_line,
            "venue": rec.venue,
            "year": rec.year,
            "header_label": rec.header_label,
            "header_lang": rec.header_lang,
            "text": rec.text,
            "text_raw": rec.text_raw,
            "lang": rec.lang,
            "lang_confidence": rec.lang_confidence,
            "n_chars": len(rec.text),
            **{c: getattr(rec, c) for c in SIGNAL_COLUMNS},
            "pii": {"email": rec.n_emails, "phone": rec.n_phones},
            "fixes": list(rec.fixes),
            "lost_words": list(rec.lost_words),
            "dup_count": len(also),
            "also_in": list(also),
        }

    def column(self, name: str, lo: int = 0, hi: int | None = None) -> list:
        """The values of column ``name`` for rows ``lo``..``hi``, as the rows' dicts would hold them
        (``fixes`` as tuples: the same values to Arrow and to a Counter)."""
        hi = len(self) if hi is None else min(hi, len(self))
        if name not in _DERIVED:
            return list(map(attrgetter(name), self._records[lo:hi]))
        if name == "n_chars":
            return [len(r.text) for r in self._records[lo:hi]]
        if name == "pii":
            return [{"email": r.n_emails, "phone": r.n_phones} for r in self._records[lo:hi]]
        also = self._also_in
        if name == "dup_count":
            return [len(also[i]) if i in also else 0 for i in range(lo, hi)]
        return [also.get(i, []) for i in range(lo, hi)]

    def arrow(self, lo: int, hi: int, schema: pa.Schema) -> pa.Table:
        """Rows ``lo``..``hi`` as an Arrow table of ``schema``, built a column at a time."""
        arrays = [_array(self.column(f.name, lo, hi), f.type) for f in schema]
        return pa.Table.from_arrays(arrays, schema=schema)


def string_array(values: Sequence[str | None]) -> pa.Array:
    """Strings as Arrow, encoded here: pyarrow (and pandas' Arrow-backed ``str`` columns) convert a str
    through CPython's UTF-8 cache, which then stays on every non-ASCII str for as long as its record
    lives (a second copy of its text)."""
    encoded = [None if v is None else v.encode() for v in values]
    return pa.array(encoded, pa.binary()).cast(pa.string())


def _array(values: list, type_: pa.DataType) -> pa.Array:
    return string_array(values) if type_ == pa.string() else pa.array(values, type_)


def column(rows: Sequence[dict], name: str) -> list:
    """One column of a table's rows: without dicts for ``RecordRows``, from the dicts otherwise."""
    return rows.column(name) if isinstance(rows, RecordRows) else [row[name] for row in rows]


def to_arrow(rows: Sequence[dict], lo: int, hi: int, schema: pa.Schema) -> pa.Table:
    """Rows ``lo``..``hi`` of a table as Arrow, built a column at a time."""
    if isinstance(rows, RecordRows):
        return rows.arrow(lo, hi, schema)
    part = rows[lo:hi]
    arrays = [_array([row.get(f.name) for row in part], f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)
