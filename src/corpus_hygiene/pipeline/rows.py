"""The records table's rows without a dict per row.

The dataset's records table is the kept records (in provenance order) plus two columns the dedup step
sets: ``dup_count`` and ``also_in``. ``RecordRows`` holds exactly that (the records' keys; their other
fields stay staged on disk), and gives a column as a list (``column``), a range of rows as Arrow
(``arrow``: column by column, for the Parquet file and the gates), and a row as a dict only when one is
asked for (indexing, iteration): building a dict per record and converting the dicts to Arrow costs
about twice the column-by-column conversion.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa

from corpus_hygiene.pipeline.staging import READ_ROWS, REJECTED_SCHEMA, STAGED_SCHEMA, Keys, RecordStore
from corpus_hygiene.signals import SIGNAL_COLUMNS


class RecordRows(Sequence):
    """The kept records' keys (``staging.Keys``, already in the table's order) and, by row, the refs
    of the duplicates each stands for (``also_in``, sorted; positions without duplicates are absent).
    The columns a key holds come from the keys; the others are read from the ``store``."""

    __slots__ = ("_keys", "_also_in", "_store")

    def __init__(self, keys: Keys, also_in: Mapping[int, list[str]], store: RecordStore) -> None:
        self._keys, self._also_in, self._store = keys, also_in, store

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._row(j) for j in range(*i.indices(len(self)))]
        return self._row(range(len(self))[i])

    def __iter__(self) -> Iterator[dict]:
        return map(self._row, range(len(self)))

    def _row(self, i: int) -> dict:
        row = self._store.take(STAGED_SCHEMA.names, [self._keys.pos[i]]).to_pylist()[0]
        also = self._also_in.get(i, [])
        row |= {
            "n_chars": int(self._keys.n_chars[i]),
            "pii": {"email": row["n_emails"], "phone": row["n_phones"]},
            "dup_count": len(also),
            "also_in": list(also),
        }
        return {name: row[name] for name in _ROW}

    def column(self, name: str, lo: int = 0, hi: int | None = None) -> list:
        """The values of column ``name`` for rows ``lo``..``hi``, as the rows' dicts would hold them."""
        hi = len(self) if hi is None else min(hi, len(self))
        if name in _FROM_KEYS:
            return self._keys[lo:hi].values(name)
        if name == "pii":
            pii = self._stored(["n_emails", "n_phones"], lo, hi).rename_columns(["email", "phone"])
            return pii.to_pylist()
        also = self._also_in
        if name == "dup_count":
            return [len(also[i]) if i in also else 0 for i in range(lo, hi)]
        if name == "also_in":
            return [also.get(i, []) for i in range(lo, hi)]
        return self._stored([name], lo, hi).column(0).to_pylist()

    def _stored(self, names: list[str], lo: int, hi: int) -> pa.Table:
        return self._store.take(names, self._keys.pos[lo:hi])

    def arrow(self, lo: int, hi: int, schema: pa.Schema) -> pa.Table:
        """Rows ``lo``..``hi`` as an Arrow table of ``schema``, built a column at a time; the stored
        columns of the schema's type are read at once and go as read."""
        as_stored = [
            f.name for f in schema if f.name in _AS_STORED and STAGED_SCHEMA.field(f.name).type == f.type
        ]
        read, keys = self._stored(as_stored, lo, hi), self._keys[lo:hi]
        arrays = [
            read.column(f.name)
            if f.name in as_stored
            else keys.arrow(f.name).cast(f.type)
            if f.name in _FROM_KEYS
            else _array(self.column(f.name, lo, hi), f.type)
            for f in schema
        ]
        return pa.Table.from_arrays(arrays, schema=schema)


class _SlicedRows(Sequence):
    """A table whose rows are read a slice at a time (``_slice``): a row is a slice of one, iteration
    reads ``READ_ROWS`` at a time."""

    __slots__ = ()

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._slice(i)
        i = range(len(self))[i]
        return self._slice(slice(i, i + 1))[0]

    def __iter__(self) -> Iterator[dict]:
        for lo in range(0, len(self), READ_ROWS):
            yield from self._slice(slice(lo, lo + READ_ROWS))


class DuplicateRows(_SlicedRows):
    """The duplicates table's rows: dicts without ``text_raw``, which stays staged, read by position
    (``positions``, one a row) when rows, the column or an Arrow slice are asked for."""

    __slots__ = ("_rows", "_positions", "_store")

    def __init__(self, rows: list[dict], positions: np.ndarray, store: RecordStore) -> None:
        self._rows, self._positions, self._store = rows, positions, store

    def __len__(self) -> int:
        return len(self._rows)

    def _slice(self, i: slice) -> list[dict]:
        lo, hi, step = i.indices(len(self))
        texts = self.column("text_raw", lo, hi)[::step]
        return [row | {"text_raw": text} for row, text in zip(self._rows[i], texts, strict=True)]

    def _texts(self, lo: int, hi: int | None) -> pa.ChunkedArray:
        return self._store.take(["text_raw"], self._positions[lo:hi]).column(0)

    def column(self, name: str, lo: int = 0, hi: int | None = None) -> list:
        if name == "text_raw":
            return self._texts(lo, hi).to_pylist()
        return [row[name] for row in self._rows[lo:hi]]

    def arrow(self, lo: int, hi: int, schema: pa.Schema) -> pa.Table:
        arrays = [
            self._texts(lo, hi).cast(f.type)
            if f.name == "text_raw"
            else _array(self.column(f.name, lo, hi), f.type)
            for f in schema
        ]
        return pa.Table.from_arrays(arrays, schema=schema)


class QuarantineRows(_SlicedRows):
    """The quarantine table's rows: nothing of them in memory but their positions among the staged
    rejections (``positions``, in the table's order); rows, a column or an Arrow slice are read when
    asked for."""

    __slots__ = ("_positions", "_store")

    def __init__(self, positions: np.ndarray, store: RecordStore) -> None:
        self._positions, self._store = positions, store

    def __len__(self) -> int:
        return len(self._positions)

    def _slice(self, i: slice) -> list[dict]:
        return self._store.take_rejected(REJECTED_SCHEMA.names, self._positions[i]).to_pylist()

    def column(self, name: str, lo: int = 0, hi: int | None = None) -> list:
        return self._store.take_rejected([name], self._positions[lo:hi]).column(0).to_pylist()

    def arrow(self, lo: int, hi: int, schema: pa.Schema) -> pa.Table:
        table = self._store.take_rejected(schema.names, self._positions[lo:hi])
        return pa.Table.from_arrays([table[f.name].cast(f.type) for f in schema], schema=schema)


# the records table's columns (a row's keys, in order), those the Keys hold, and those read from the store
_ROW = (
    *("record_id", "source_file", "source_line", "venue", "year", "header_label", "header_lang", "text"),
    *("text_raw", "lang", "lang_confidence", "n_chars", *SIGNAL_COLUMNS, "pii", "fixes", "lost_words"),
    *("dup_count", "also_in"),
)
_FROM_KEYS = ("record_id", "source_file", "source_line", "lang", "n_chars")
_AS_STORED = {f.name: f.type for f in STAGED_SCHEMA if f.name not in _FROM_KEYS}


def string_array(values: Sequence[str | None]) -> pa.Array:
    """Strings as Arrow, encoded here: pyarrow (and pandas' Arrow-backed ``str`` columns) convert a str
    through CPython's UTF-8 cache, which then stays on every non-ASCII str for as long as its record
    lives (a second copy of its text)."""
    encoded = [None if v is None else v.encode() for v in values]
    return pa.array(encoded, pa.binary()).cast(pa.string())


def _array(values: list, type_: pa.DataType) -> pa.Array:
    return string_array(values) if type_ == pa.string() else pa.array(values, type_)


_STAGED = RecordRows | DuplicateRows | QuarantineRows  # tables that read their columns from the staging


def column(rows: Sequence[dict], name: str) -> list:
    """One column of a table's rows: without dicts for ``RecordRows``, from the dicts otherwise."""
    return rows.column(name) if isinstance(rows, _STAGED) else [row[name] for row in rows]


def to_arrow(rows: Sequence[dict], lo: int, hi: int, schema: pa.Schema) -> pa.Table:
    """Rows ``lo``..``hi`` of a table as Arrow, built a column at a time."""
    if isinstance(rows, _STAGED):
        return rows.arrow(lo, hi, schema)
    part = rows[lo:hi]
    arrays = [_array([row.get(f.name) for row in part], f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)
