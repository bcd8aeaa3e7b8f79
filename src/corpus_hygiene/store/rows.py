"""The output tables as views over the store, without a dict per row (``StagedTable``).

The records table is the kept records (in provenance order) plus two columns the dedup step sets:
``dup_count`` and ``also_in``; the duplicates and pairs tables pair two records' keys; the quarantine
table is the staged rejections in order. Each table makes a column at a time from the keys and the
store: a column as a list (``column``), a range of rows as Arrow (``arrow``, for the Parquet file and
the gates), a row as a dict only when one is asked for. Building a dict per record and converting the
dicts to Arrow costs about twice the column-by-column conversion.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from hashlib import blake2b

import numpy as np
import pyarrow as pa

from checks.schemas import TABLES
from corpus_hygiene.dedup.exact import Duplicates, VerifiedPairs, why_kept
from corpus_hygiene.store.keys import READ_ROWS, Keys
from corpus_hygiene.store.records import STAGED_SCHEMA, RecordStore

# the records table's columns (a row's keys, in order), those the Keys hold, and those read from the store
_ROW = tuple(TABLES["records"].names)
_FROM_KEYS = ("source_file", "source_line", "lang", "n_chars")
_AS_STORED = {f.name: f.type for f in STAGED_SCHEMA if f.name not in _FROM_KEYS}


class Copies:
    """The duplicates each kept record stands for (the records table's ``dup_count`` and ``also_in``) as
    two columns, an entry a duplicate: ``rows``, the kept record's row (ascending), and ``records``, the
    duplicate's index into ``keys`` (in provenance order within a row)."""

    __slots__ = ("_rows", "_records", "_keys")

    def __init__(self, rows: np.ndarray, records: np.ndarray, keys: Keys) -> None:
        self._rows, self._records, self._keys = rows, records, keys

    def _bounds(self, lo: int, hi: int) -> np.ndarray:
        return np.searchsorted(self._rows, np.arange(lo, max(lo, hi) + 1))

    def counts(self, lo: int, hi: int) -> list[int]:
        return np.diff(self._bounds(lo, hi)).tolist()

    def refs(self, lo: int, hi: int) -> list[list[str]]:
        """The refs of rows ``lo``..``hi``'s duplicates, a list a row."""
        bounds = self._bounds(lo, hi)
        refs = self._keys.take(self._records[bounds[0] : bounds[-1]]).refs()
        starts = (bounds - bounds[0]).tolist()
        return [refs[a:b] for a, b in zip(starts[:-1], starts[1:], strict=True)]


class StagedTable(Sequence):
    """An output table made from the store a column at a time: each table says how its columns are made
    (``_columns``). A row is a dict only when one is asked for (indexing; iteration, ``READ_ROWS`` at a
    time); ``column`` gives a list, ``arrow`` a range of rows as Arrow (the Parquet file, the gates)."""

    NAMES: tuple[str, ...] = ()
    __slots__ = ()

    def _columns(self, names: Sequence[str], lo: int, hi: int, arrow: bool) -> dict[str, list | Column]:
        """Columns ``names`` of rows ``lo``..``hi`` (``hi`` ≤ len): Python lists or Arrow arrays, Arrow
        where that is cheaper when ``arrow``."""
        raise NotImplementedError

    def __getitem__(self, i):
        if isinstance(i, slice):
            at = range(*i.indices(len(self)))
            if not at:
                return []
            lo = min(at[0], at[-1])
            rows = self._rows(lo, max(at[0], at[-1]) + 1)
            return [rows[j - lo] for j in at]
        i = range(len(self))[i]
        return self._rows(i, i + 1)[0]

    def __iter__(self) -> Iterator[dict]:
        for lo in range(0, len(self), READ_ROWS):
            yield from self._rows(lo, lo + READ_ROWS)

    def _rows(self, lo: int, hi: int) -> list[dict]:
        columns = self._columns(self.NAMES, lo, min(hi, len(self)), arrow=False)
        values = [_python(columns[name]) for name in self.NAMES]
        return [dict(zip(self.NAMES, row, strict=True)) for row in zip(*values, strict=True)]

    def column(self, name: str, lo: int = 0, hi: int | None = None) -> list:
        hi = len(self) if hi is None else min(hi, len(self))
        return _python(self._columns([name], lo, hi, arrow=False)[name])

    def arrow(self, lo: int, hi: int, schema: pa.Schema) -> pa.Table:
        columns = self._columns(schema.names, lo, min(hi, len(self)), arrow=True)
        arrays = [_arrow(columns[f.name], f.type) for f in schema]
        return pa.Table.from_arrays(arrays, schema=schema)


Column = pa.Array | pa.ChunkedArray


def _python(values: list | Column) -> list:
    return values.to_pylist() if isinstance(values, Column) else values


def _arrow(values: list | Column, type_: pa.DataType) -> Column:
    return values.cast(type_) if isinstance(values, Column) else _array(values, type_)


class RecordRows(StagedTable):
    """The kept records: their indices into the keys (``store.keys.Keys``), in the table's order, and the
    duplicates each stands for (``Copies``). The columns a key holds come from the keys; the others are
    read from the ``store``, in one read a slice."""

    NAMES = _ROW
    __slots__ = ("_keys", "_at", "_copies", "_store")

    def __init__(self, keys: Keys, rows: np.ndarray, copies: Copies, store: RecordStore) -> None:
        self._keys, self._at, self._copies, self._store = keys, rows, copies, store

    def __len__(self) -> int:
        return len(self._at)

    def _columns(self, names: Sequence[str], lo: int, hi: int, arrow: bool) -> dict[str, list | Column]:
        keys = self._keys.take(self._at[lo:hi])
        stored = [n for n in names if n in _AS_STORED] + (["n_emails", "n_phones"] if "pii" in names else [])
        read = self._store.take(stored, keys.pos) if stored else None
        made: dict[str, list | Column] = {}
        for name in names:
            if name in _FROM_KEYS:
                made[name] = keys.arrow(name) if arrow else keys.values(name)
            elif name == "pii":
                made[name] = (
                    read.select(["n_emails", "n_phones"]).rename_columns(["email", "phone"]).to_pylist()
                )
            elif name == "dup_count":
                made[name] = self._copies.counts(lo, hi)
            elif name == "also_in":
                made[name] = self._copies.refs(lo, hi)
            else:
                made[name] = read.column(name)
        return made


@dataclass(frozen=True, eq=False)
class ReferenceCopies:
    """Records that repeat a reference row (``record``: indices into the keys) and what the duplicates
    table says of each: the reference's name, the row's id (None: the reference has no id column) and
    ``file#row``, the verified similarity and why."""

    record: np.ndarray
    reference: list[str]
    canonical_id: list[str | None]
    canonical_ref: list[str]
    similarity: np.ndarray
    reason: list[str]

    def __len__(self) -> int:
        return len(self.record)


class DuplicateRows(StagedTable):
    """The duplicates table's rows, in provenance order: the dedup step's (``exact.Duplicates``, in the
    table's order), the fields of the duplicate's and the canonical's keys; and a reference's copies
    (``ReferenceCopies``) among them. ``text_raw`` is read from the store."""

    NAMES = tuple(TABLES["duplicates"].names)
    __slots__ = ("_dups", "_store", "_refs", "_order")

    def __init__(self, dups: Duplicates, store: RecordStore, refs: ReferenceCopies | None = None) -> None:
        self._dups, self._store, self._refs, self._order = dups, store, refs, None
        if refs is not None and len(refs):
            self._order = dups.keys.take(np.r_[dups.record, refs.record]).provenance_order()

    def __len__(self) -> int:
        return len(self._dups) + (len(self._refs) if self._order is not None else 0)

    def _columns(self, names: Sequence[str], lo: int, hi: int, arrow: bool) -> dict[str, list | Column]:
        if self._order is None:
            return self._run_columns(names, self._dups.take(np.arange(lo, hi)))
        at = self._order[lo:hi]
        run = at < len(self._dups)
        mine = self._run_columns(names, self._dups.take(at[run]))
        theirs = self._reference_columns(names, at[~run] - len(self._dups))
        out = {}
        for name in names:
            merged = np.empty(len(at), object)
            merged[run], merged[~run] = _python(mine[name]), _python(theirs[name])
            out[name] = merged.tolist()
        return out

    def _run_columns(self, names: Sequence[str], dups: Duplicates) -> dict[str, list | Column]:
        record, canonical = dups.keys.take(dups.record), dups.keys.take(dups.canonical)
        made = {
            "source_file": lambda: record.values("source_file"),
            "source_line": lambda: record.values("source_line"),
            "canonical_id": lambda: canonical.values("record_id"),
            "canonical_ref": canonical.refs,
            "kind": lambda: ["near" if near else "exact" for near in dups.near.tolist()],
            "similarity": lambda: dups.similarity.tolist(),
            "reason": lambda: [why_kept(canonical[i], record[i]) for i in range(len(record))],
            "reference": lambda: [None] * len(record),
            "text_raw": lambda: self._store.take(["text_raw"], record.pos).column(0),
        }
        return {name: made[name]() for name in names}

    def _reference_columns(self, names: Sequence[str], at: np.ndarray) -> dict[str, list | Column]:
        refs, listed = self._refs, at.tolist()
        record = self._dups.keys.take(refs.record[at])
        made = {
            "source_file": lambda: record.values("source_file"),
            "source_line": lambda: record.values("source_line"),
            "canonical_id": lambda: [refs.canonical_id[i] for i in listed],
            "canonical_ref": lambda: [refs.canonical_ref[i] for i in listed],
            "kind": lambda: ["reference"] * len(listed),
            "similarity": lambda: refs.similarity[at].tolist(),
            "reason": lambda: [refs.reason[i] for i in listed],
            "reference": lambda: [refs.reference[i] for i in listed],
            "text_raw": lambda: self._store.take(["text_raw"], record.pos).column(0),
        }
        return {name: made[name]() for name in names}


class PairRows(StagedTable):
    """The verified near-duplicate pairs' rows, from the dedup step's columns (``exact.VerifiedPairs``,
    in the table's order): the fields of both records' keys, the similarity, whether it merged them."""

    NAMES = tuple(TABLES["pairs"].names)
    __slots__ = ("_pairs",)

    def __init__(self, pairs: VerifiedPairs) -> None:
        self._pairs = pairs

    def __len__(self) -> int:
        return len(self._pairs)

    def _columns(self, names: Sequence[str], lo: int, hi: int, arrow: bool) -> dict[str, list | Column]:
        pairs = self._pairs
        record, candidate = pairs.keys.take(pairs.record[lo:hi]), pairs.keys.take(pairs.candidate[lo:hi])
        made = {
            "source_file": lambda: record.values("source_file"),
            "source_line": lambda: record.values("source_line"),
            "record_id": lambda: record.values("record_id"),
            "candidate_id": lambda: candidate.values("record_id"),
            "candidate_ref": candidate.refs,
            "similarity": lambda: pairs.similarity[lo:hi].tolist(),
            "merged": lambda: pairs.merged[lo:hi].tolist(),
        }
        return {name: made[name]() for name in names}


class QuarantineRows(StagedTable):
    """The quarantine table's rows: nothing of them in memory but their positions among the staged
    rejections (``positions``, in the table's order); everything else is read when asked for."""

    NAMES = tuple(TABLES["quarantine"].names)
    __slots__ = ("_positions", "_store")

    def __init__(self, positions: np.ndarray, store: RecordStore) -> None:
        self._positions, self._store = positions, store

    def __len__(self) -> int:
        return len(self._positions)

    def _columns(self, names: Sequence[str], lo: int, hi: int, arrow: bool) -> dict[str, list | Column]:
        table = self._store.take_rejected(list(names), self._positions[lo:hi])
        return {name: table.column(name) for name in names}


def string_array(values: Sequence[str | None]) -> pa.Array:
    """Strings as Arrow, encoded here: pyarrow (and pandas' Arrow-backed ``str`` columns) convert a str
    through CPython's UTF-8 cache, which then stays on every non-ASCII str for as long as its record
    lives (a second copy of its text)."""
    encoded = [None if v is None else v.encode() for v in values]
    return pa.array(encoded, pa.binary()).cast(pa.string())


def _array(values: list, type_: pa.DataType) -> pa.Array:
    return string_array(values) if type_ == pa.string() else pa.array(values, type_)


def columns(rows: Sequence[dict], *names: str) -> Iterator[tuple[int, list[list]]]:
    """Columns ``names`` of a table, ``READ_ROWS`` rows at a time: (first row, a list a name). What reads
    a whole column holds one slice's Python values at a time, not the table's; the staged tables make
    their columns without dicts."""
    for lo in range(0, len(rows), READ_ROWS):
        hi = min(len(rows), lo + READ_ROWS)
        if isinstance(rows, StagedTable):
            made = rows._columns(names, lo, hi, arrow=False)
            yield lo, [_python(made[name]) for name in names]
        else:
            part = rows[lo:hi]
            yield lo, [[row[name] for row in part] for name in names]


def provenance_numbers(files: Sequence, lines: Sequence[int], numbering: dict) -> np.ndarray:
    """(source_file, source_line) pairs as one int64 each, comparable across slices: the file's number in
    ``numbering`` (a file not in it yet is numbered as it comes), then the line's low 32 bits."""
    numbers = np.array([numbering.setdefault(f, len(numbering)) for f in files], np.int64)
    return numbers << 32 | (np.array(lines, np.int64) & 0xFFFFFFFF)


STRING_KEY = np.dtype("S16")


def string_keys(values: Sequence[str | None]) -> np.ndarray:
    """Strings as 16-byte keys to sort and search with numpy (16 bytes a value; an Arrow string and its
    hash table take several times that): each one's BLAKE2b digest, a null a key of its own. Two values
    share a key with chance ~N²/2¹²⁹ (record ids are such digests too)."""
    return np.array(
        [b"n" if v is None else blake2b(v.encode("utf-8", "surrogatepass"), digest_size=16).digest()
         for v in values],
        dtype=STRING_KEY,
    )  # fmt: skip


def to_arrow(rows: Sequence[dict], lo: int, hi: int, schema: pa.Schema) -> pa.Table:
    """Rows ``lo``..``hi`` of a table as Arrow, built a column at a time."""
    if isinstance(rows, StagedTable):
        return rows.arrow(lo, hi, schema)
    part = rows[lo:hi]
    arrays = [_array([row.get(f.name) for row in part], f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)
