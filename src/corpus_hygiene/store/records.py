"""The run's records on disk, so that the flow's memory does not grow with the corpus.

A batch's records are packed into the bytes of one Arrow IPC file where they are made (``pack``: on a
Dask worker, or in the flow), every field included, text and signature, and its rejected paragraphs
into another; the flow writes them to the store as they arrive and keeps their ``Keys``, as columns:
what the canonical rank and the provenance order need, and the quarantine's order; their ids go to
disk again, spilled by hash (``spill.py``), for exact dedup to group a part at a time. The
global stages read the other columns back by position (``take``), a slice at a time: the near-duplicate
search its texts and signatures, the gates and the Parquet files their rows, the report a few texts.
The files are memory-mapped only while a slice is read from them, so the pages read do not stay in
the process.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from checks.schemas import TABLES
from corpus_hygiene.dedup.keys import id_bytes
from corpus_hygiene.models import FileResult, Record, Rejected
from corpus_hygiene.publish.owner import OWNER_MARK
from corpus_hygiene.store.keys import ID_ROW, READ_ROWS, Codes, Keys
from corpus_hygiene.store.spill import Spill, StagingError

# The Record fields as stored: the records table's type where it has the column.
_STAGED_ONLY = {
    "n_emails": pa.int32(),
    "n_phones": pa.int32(),
    "signature": pa.binary(),
    "text_key": pa.binary(),
}
STAGED_SCHEMA = pa.schema(
    (f.name, _STAGED_ONLY.get(f.name) or TABLES["records"].field(f.name).type) for f in fields(Record)
)
# a rejected paragraph or file as stored: the quarantine table's columns
REJECTED_SCHEMA = pa.schema(
    [
        ("source_file", pa.string()),
        ("source_line", pa.int32()),
        ("reason", pa.string()),
        ("detail", pa.string()),
        ("text_raw", pa.string()),
    ]
)
assert REJECTED_SCHEMA.names == [f.name for f in fields(Rejected)], "every Rejected field, in order"


@dataclass(frozen=True, slots=True)
class Packed:
    """A batch's results without their records and rejections, and those as the bytes of two Arrow IPC
    files (``STAGED_SCHEMA``, ``REJECTED_SCHEMA``; empty when there are none): what a worker sends the
    flow, instead of a Python object a field."""

    results: list[FileResult]
    records: bytes
    rejected: bytes = b""


def _table(rows: Sequence, schema: pa.Schema) -> pa.Table:
    """Dataclass instances as a table of ``schema``, whose names are their fields (one pass)."""
    # pyarrow leaves CPython's UTF-8 copy on each non-ASCII str it converts (rows.string_array):
    # harmless here, the rows go once packed
    columns = list(zip(*map(attrgetter(*schema.names), rows), strict=True)) if rows else [()] * len(schema)
    arrays = [pa.array(values, f.type) for f, values in zip(schema, columns, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)


def record_table(records: Sequence[Record]) -> pa.Table:
    """Records as a table of ``STAGED_SCHEMA``."""
    return _table(records, STAGED_SCHEMA)


def records_of(table: pa.Table) -> list[Record]:
    """The inverse of ``record_table``: the Records again, their lists as tuples."""
    columns = [table[name].to_pylist() for name in STAGED_SCHEMA.names]
    for name in ("fixes", "lost_words"):
        columns[STAGED_SCHEMA.get_field_index(name)] = list(map(tuple, table[name].to_pylist()))
    return list(map(Record, *columns))


def ipc_file(table: pa.Table, options: pa.ipc.IpcWriteOptions | None = None) -> bytes:
    """``table`` as the bytes of an Arrow IPC file."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _checked(results: list[FileResult], rows: list[int]) -> None:
    if any(n and not r.checked for r, n in zip(results, rows, strict=True)):
        raise ValueError("only checked results are staged: the record checks read the records")


def _packed(results: list[FileResult], records: pa.Table | None) -> Packed:
    rejected = [rej for r in results for rej in r.rejected]
    return Packed(
        [FileResult(r.source, [], [], r.checked) for r in results],
        ipc_file(records) if records is not None and records.num_rows else b"",
        ipc_file(_table(rejected, REJECTED_SCHEMA)) if rejected else b"",
    )


def pack(results: list[FileResult]) -> Packed:
    """The batch packed for ``RecordStore.add``. Only checked results: the record checks read the records."""
    _checked(results, [len(r.records) for r in results])
    records = [rec for r in results for rec in r.records]
    return _packed(results, record_table(records) if records else None)


def pack_tables(results: list[FileResult], tables: list[pa.Table]) -> Packed:
    """``pack`` of results read without their records and each one's records as a table of
    ``STAGED_SCHEMA`` (how the per-file cache's hits are read)."""
    _checked(results, [t.num_rows for t in tables])
    # one record batch: a take across many small ones is several times slower
    return _packed(results, pa.concat_tables(tables).combine_chunks() if tables else None)


def pack_rejected(rejected: list[Rejected]) -> Packed:
    """Rejections that belong to no file's result (files refused before reading), packed."""
    return Packed([], b"", ipc_file(_table(rejected, REJECTED_SCHEMA)) if rejected else b"")


class _Parts:
    """Arrow IPC files of one schema, numbered in a folder: rows addressed by their position across them.
    A file is memory-mapped only while rows are read from it."""

    def __init__(self, folder: Path, suffix: str, schema: pa.Schema) -> None:
        self.folder, self.suffix, self.schema = folder, suffix, schema
        self.paths: list[Path] = []
        self.starts: list[int] = [0]  # the first position of each file, then the total

    def __len__(self) -> int:
        return self.starts[-1]

    def add(self, data: bytes, read: Callable[[pa.Table], None]) -> None:
        """Write one more file; ``read`` gets its table, mapped, to take what stays in memory (copies)."""
        path = self.folder / f"{len(self.paths):06d}{self.suffix}"
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise StagingError(f"cannot stage records in {self.folder}: {exc.strerror or exc}") from exc
        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
            n = table.num_rows
            read(table)
            del table
        self.paths.append(path)
        self.starts.append(self.starts[-1] + n)

    def take(self, names: Sequence[str], positions: Sequence[int] | np.ndarray) -> pa.Table:
        """Columns ``names`` at ``positions``, in their order: each file holding some is mapped once."""
        positions = np.asarray(positions, dtype=np.int64)
        if not len(positions):
            return pa.schema([self.schema.field(n) for n in names]).empty_table()
        part = np.searchsorted(self.starts, positions, side="right") - 1
        order = np.argsort(part, kind="stable")
        pieces: dict[str, list[pa.Array]] = {name: [] for name in names}
        for p in np.unique(part).tolist():
            rows = positions[part == p] - self.starts[p]
            with pa.memory_map(str(self.paths[p])) as source:
                table = pa.ipc.open_file(source).read_all().select(list(names)).take(pa.array(rows))
                for name in names:
                    pieces[name] += table[name].chunks
                del table
        back = pa.array(np.argsort(order, kind="stable"))  # grouped by file: back to the order asked
        # a column at a time, its pieces freed as it is put in order: one copy of the rows, not three
        arrays = []
        for name in names:
            joined = pa.concat_arrays(pieces.pop(name))
            arrays.append(joined.take(back))
            del joined
        return pa.Table.from_arrays(arrays, schema=pa.schema([self.schema.field(n) for n in names]))


@dataclass(frozen=True, eq=False)
class RejectedKeys:
    """The staged rejections' sort keys as columns: file and reason codes, line (-1 for a whole file)."""

    source_file: np.ndarray  # codes into files.values
    source_line: np.ndarray
    reason: np.ndarray  # codes into reasons.values
    files: Codes
    reasons: Codes

    def __len__(self) -> int:
        return len(self.reason)

    def order(self) -> np.ndarray:
        """Positions sorted by (source_file, source_line, reason), a whole file's row first: the
        quarantine table's order. Stable: a file's rows are staged together, in their order."""
        return np.lexsort(
            (self.reasons.ranks()[self.reason], self.source_line, self.files.ranks()[self.source_file])
        )

    def reason_counts(self) -> dict[str, int]:
        counts = np.bincount(self.reason, minlength=len(self.reasons.values)).tolist()
        return dict(sorted((r, n) for r, n in zip(self.reasons.values, counts, strict=True) if n))


class RecordStore:
    """Records and rejections staged in ``folder`` (made here; removed by ``remove``, or when the store
    is collected). Without a folder, a temporary one: callers outside the flow (tests, benchmarks) stage
    there."""

    def __init__(self, folder: Path | str | None = None) -> None:
        if folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="corpus-hygiene-records-"))
        else:
            self.folder = Path(folder)
            try:
                self.folder.mkdir(parents=True)
                (self.folder / OWNER_MARK).touch()  # what remove_staged_records may remove
            except OSError as exc:
                raise StagingError(f"cannot stage records in {self.folder}: {exc.strerror or exc}") from exc
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, True)
        self._records = _Parts(self.folder, ".arrow", STAGED_SCHEMA)
        self._rejected = _Parts(self.folder, ".rejected.arrow", REJECTED_SCHEMA)
        self._files, self._langs, self._reasons = Codes(), Codes(), Codes()
        self._ids = Spill(ID_ROW, self.folder)  # each record's id and position, for ``id_parts``
        self._key_parts: list[tuple] = []  # each records file's key columns, joined by ``keys``
        self._rejected_parts: list[tuple] = []  # each rejections file's sort keys
        self._keys: Keys | None = None

    def __len__(self) -> int:
        return len(self._records)

    def remove(self) -> None:
        self._cleanup()

    @property
    def keys(self) -> Keys:
        """Every staged record's key, by position."""
        if self._keys is None or len(self._keys) != len(self):
            parts = list(zip(*self._key_parts, strict=True)) or [[]] * 5
            numbers = [np.concatenate(c) if c else np.zeros(0, np.int32) for c in parts]
            self._key_parts = [tuple(numbers)]  # joined: the batches' columns go
            self._keys = Keys(*numbers, self._files, self._langs, self)
        return self._keys

    def id_parts(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The records' ids (``ID_ROW``: the 16 bytes each spells, its position), a part at a time, sorted
        (``Spill.sorted_parts``): every record of an id is in the same part."""
        return self._ids.sorted_parts()

    @property
    def rejected_keys(self) -> RejectedKeys:
        """Every staged rejection's sort keys, by position."""
        parts = list(zip(*self._rejected_parts, strict=True)) or [[]] * 3
        columns = [np.concatenate(c) if c else np.zeros(0, np.int32) for c in parts]
        return RejectedKeys(*columns, self._files, self._reasons)

    def _read_keys(self, table: pa.Table) -> None:
        ids = np.empty(table.num_rows, ID_ROW)
        ids["key"] = id_bytes(table["record_id"]).view(ID_ROW["key"]).ravel()
        ids["pos"] = np.arange(len(self), len(self) + table.num_rows)  # not counted in yet
        self._ids.add(ids)
        self._key_parts.append(  # new arrays: a view of the mapped file would keep its pages
            (
                self._files.encode(table["source_file"]),
                table["source_line"].to_numpy().astype(np.int32),  # astype copies
                pc.list_value_length(table["fixes"]).to_numpy().astype(np.int32),
                pc.utf8_length(table["text"]).to_numpy().astype(np.int32),  # code points, as len()
                self._langs.encode(table["lang"]),
            )
        )

    def _read_rejected_keys(self, table: pa.Table) -> None:
        self._rejected_parts.append(
            (
                self._files.encode(table["source_file"]),
                pc.fill_null(table["source_line"], -1).to_numpy().astype(np.int32),  # -1: a whole file
                self._reasons.encode(table["reason"]),
            )
        )

    def add(self, batch: Packed | list[FileResult]) -> list[FileResult]:
        """Stage the records and rejections of a batch of results (``pack`` them first, where they are
        made, for less to send); the results come back without them (their source reports stay in
        memory)."""
        if not isinstance(batch, Packed):
            batch = pack(batch)
        if batch.records:
            self._records.add(batch.records, self._read_keys)
        if batch.rejected:
            self._rejected.add(batch.rejected, self._read_rejected_keys)
        return batch.results

    def take(self, names: Sequence[str], positions: Sequence[int] | np.ndarray) -> pa.Table:
        """Record columns ``names`` at ``positions``, in their order."""
        return self._records.take(names, positions)

    def take_rejected(self, names: Sequence[str], positions: Sequence[int] | np.ndarray) -> pa.Table:
        """Rejection columns ``names`` at ``positions``, in their order."""
        return self._rejected.take(names, positions)

    def column(self, name: str, positions: np.ndarray) -> StagedColumn:
        """Column ``name`` of the records at ``positions``, read when it is indexed or iterated."""
        return StagedColumn(self, name, np.asarray(positions, np.int64))


def keys_of(records: Sequence[Record]) -> Keys:
    """The keys of records in memory, staged in a temporary store (position i: the i-th record)."""
    store = RecordStore()
    if records:
        store.add(Packed([], ipc_file(record_table(records))))
    return store.keys


class StagedColumn(Sequence):
    """One column of some staged records, in a given order, read back on demand: an index or a slice
    reads those rows; iteration reads ``READ_ROWS`` at a time; ``take`` the rows of an index array."""

    __slots__ = ("_store", "_name", "_positions")

    def __init__(self, store: RecordStore, name: str, positions: np.ndarray) -> None:
        self._store, self._name, self._positions = store, name, positions

    def __len__(self) -> int:
        return len(self._positions)

    def __getitem__(self, i):
        return self.take(i) if isinstance(i, slice) else self.take([i])[0]

    def __iter__(self) -> Iterator:
        for lo in range(0, len(self), READ_ROWS):
            yield from self[lo : lo + READ_ROWS]

    def take(self, indices: np.ndarray | slice | list[int]) -> list:
        return self.arrow(indices).to_pylist()

    def arrow(self, indices: np.ndarray | slice | list[int]) -> pa.Array:
        """The rows at ``indices`` as one Arrow array: no Python object a row."""
        return self._store.take([self._name], self._positions[indices]).column(0).combine_chunks()
