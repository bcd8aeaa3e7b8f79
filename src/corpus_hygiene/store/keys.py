"""The run's records as keys: the columns of every staged record that the canonical rank, the provenance
order and the quarantine's order need, held in memory while the other columns stay on disk."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

READ_ROWS = 65_536  # rows read back at a time when a whole column is iterated
ID_ROW = np.dtype([("key", "S16"), ("pos", "<i8")])  # a record's id as its 16 bytes, and its position


@dataclass(frozen=True, slots=True)
class RecordKey:
    """One staged record's key (``Keys[i]``): its position in the store, and the fields of its
    identity, canonical rank (``dedup.exact.rank_order``) and CJK flag."""

    pos: int
    source_file: str
    source_line: int
    n_fixes: int
    n_chars: int
    lang: str

    @property
    def ref(self) -> str:
        return f"{self.source_file}:{self.source_line}"


class Codes:
    """Strings of few distinct values (file names, languages) as int32 codes into ``values``."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._code: dict[str, int] = {}

    def encode(self, column: pa.ChunkedArray | pa.Array) -> np.ndarray:
        encoded = pc.dictionary_encode(column)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()
        of = [self._code.setdefault(v, len(self._code)) for v in encoded.dictionary.to_pylist()]
        self.values = list(self._code)
        return np.asarray(of, np.int32)[encoded.indices.to_numpy(zero_copy_only=False)]

    def ranks(self) -> np.ndarray:
        """Each code's rank in the values' sorted order (Python's str order: by code point)."""
        ranks = np.empty(len(self.values), np.int64)
        ranks[sorted(range(len(self.values)), key=self.values.__getitem__)] = np.arange(len(self.values))
        return ranks

    def arrow(self, codes: np.ndarray) -> pa.Array:
        return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), self.values).cast(pa.string())


@dataclass(frozen=True, eq=False)
class Keys(Sequence):
    """The keys of staged records as columns (numbers and codes, not a Python object a record):
    ``Keys[i]`` is the ``RecordKey`` of one; ``take`` a subset in a given order."""

    source_file: np.ndarray  # codes into files.values
    source_line: np.ndarray
    n_fixes: np.ndarray
    n_chars: np.ndarray  # code points: len() of the text
    lang: np.ndarray  # codes into langs.values
    files: Codes
    langs: Codes
    store: object  # the RecordStore (records.py) the records are staged in: their ids are read from it
    at: np.ndarray | None = None  # int64: each record's position in the store; None: all, in order

    def __len__(self) -> int:
        return len(self.source_line)

    @property
    def pos(self) -> np.ndarray:
        """Each record's position in the store."""
        return self.positions(slice(None))

    def positions(self, indices: np.ndarray | slice | int) -> np.ndarray | int:
        """The store positions of the records at ``indices`` (an array's are not negative)."""
        if self.at is not None:
            return self.at[indices]
        if isinstance(indices, slice):
            return np.arange(*indices.indices(len(self)))
        scalar = isinstance(indices, int | np.integer)
        return range(len(self))[indices] if scalar else np.asarray(indices, np.int64)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.take(np.arange(*i.indices(len(self))))
        return RecordKey(
            int(self.positions(i)),
            self.files.values[self.source_file[i]],
            int(self.source_line[i]),
            int(self.n_fixes[i]),
            int(self.n_chars[i]),
            self.langs.values[self.lang[i]],
        )

    def take(self, indices: np.ndarray) -> Keys:
        """The keys at ``indices`` (of this table, not store positions), in that order."""
        at = np.asarray(indices, np.int64)
        return Keys(
            self.source_file[at],
            self.source_line[at],
            self.n_fixes[at],
            self.n_chars[at],
            self.lang[at],
            self.files,
            self.langs,
            self.store,
            self.positions(at),
        )

    def provenance_order(self) -> np.ndarray:
        """Indices that sort the keys by (source_file, source_line): the output tables' order."""
        return np.lexsort((self.source_line, self.files.ranks()[self.source_file]))

    def _codes(self, name: str) -> Codes | None:
        return {"source_file": self.files, "lang": self.langs}.get(name)

    def arrow(self, name: str) -> pa.Array:
        """Column ``name`` (a ``RecordKey`` field) as an Arrow array."""
        if name == "record_id":
            return self.store.take(["record_id"], self.pos).column(0).combine_chunks()
        if codes := self._codes(name):
            return codes.arrow(getattr(self, name))
        return pa.array(getattr(self, name))

    def refs(self) -> list[str]:
        """Each key's ``RecordKey.ref``."""
        files = self.values("source_file")
        return [f"{f}:{n}" for f, n in zip(files, self.source_line.tolist(), strict=True)]

    def values(self, name: str) -> list:
        """Column ``name`` as Python values; a file name or language is one shared str, not one a row."""
        if codes := self._codes(name):
            values = codes.values
            return [values[c] for c in getattr(self, name).tolist()]
        return self.arrow(name).to_pylist()
