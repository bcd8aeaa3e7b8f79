"""Rows spilled to disk in parts by a hash of their key, read back a part at a time: a step that only
compares rows of equal key (repeats, groups) holds one part of them, not all of them."""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path

import numpy as np

PARTS = 64  # a part of a very large run stays small; a slice still writes to few files
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: keys that differ in low bits spread evenly


class StagingError(Exception):
    """The staging folder cannot be made or written (a full or read-only disk): the run stops."""


def part_of(keys: np.ndarray, parts: int) -> np.ndarray:
    """Each key's part: its first 8 bytes (zero-padded), mixed. Equal keys share a part; a key's part
    depends on nothing else."""
    raw = np.ascontiguousarray(keys).view(np.uint8).reshape(len(keys), -1)[:, :8]
    head = np.zeros((len(keys), 8), np.uint8)
    head[:, : raw.shape[1]] = raw
    mixed = head.view("<u8").ravel() * _MIX  # wraps: the product's high bits are the hash
    return ((mixed >> np.uint64(32)) % np.uint64(parts)).astype(np.int64)


class Spill:
    """Rows of a numpy structured ``dtype`` with a ``key`` field, appended to one of ``parts`` files
    in a folder made in ``folder`` by the first ``add`` (removed by ``remove``, or when the spill is
    collected)."""

    def __init__(self, dtype: np.dtype, folder: Path | str | None = None, parts: int = PARTS) -> None:
        self.dtype, self._parts, self._in = np.dtype(dtype), parts, folder
        self.folder: Path | None = None
        self._cleanup = None

    def remove(self) -> None:
        if self._cleanup is not None:
            self._cleanup()

    def add(self, rows: np.ndarray) -> None:
        """Append ``rows`` (of ``dtype``), each to its key's part, in their order."""
        if not len(rows):
            return
        part = part_of(rows["key"], self._parts)
        order = np.argsort(part, kind="stable")
        bounds = np.searchsorted(part[order], np.arange(self._parts + 1))
        try:
            if self.folder is None:
                self.folder = Path(tempfile.mkdtemp(prefix="spill-", dir=self._in))
                self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, True)
            for p in np.flatnonzero(np.diff(bounds)).tolist():
                part_rows = rows[order[bounds[p] : bounds[p + 1]]].astype(self.dtype, copy=False)
                with open(self.folder / f"{p}.bin", "ab") as fh:  # not tofile: it ignores a full disk
                    fh.write(part_rows.view(np.uint8))
        except OSError as exc:
            where = self.folder or self._in or tempfile.gettempdir()
            raise StagingError(f"cannot spill rows to {where}: {exc.strerror or exc}") from exc

    def sorted_parts(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Each part's rows sorted by key (equal keys in the order added), and which row starts a run of
        equal keys."""
        for part in self.parts():
            part = part[np.argsort(part["key"], kind="stable")]
            yield part, np.r_[True, part["key"][1:] != part["key"][:-1]]

    def parts(self) -> Iterator[np.ndarray]:
        """Each part's rows, in the order they were added; every row of a key is in the same part."""
        for p in range(self._parts if self.folder is not None else 0):
            path = self.folder / f"{p}.bin"
            if path.exists():
                yield np.fromfile(path, self.dtype)
