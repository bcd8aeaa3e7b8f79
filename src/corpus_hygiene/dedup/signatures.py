"""MinHash signatures of texts, one uint32 row each, read from what the per-file stage made where it can."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.similarity import lsh_shingles


@lru_cache(maxsize=4)
def _signer(config: DedupConfig):
    # Imported on first use: datasketch is slow to import (its async LSH), and a run whose records
    # all carry their signatures (made per file, or cached) never signs anything here.
    from corpus_hygiene.dedup.minhash import Signer

    return Signer(config)


def signature_of(text: str, config: DedupConfig) -> bytes:
    """The MinHash signature of one text's LSH shingles: num_perm uint32, little-endian."""
    return _signer(config).sign(lsh_shingles(text, config)).astype("<u4").tobytes()


def signature_block(
    known: pa.Array, texts_at: Callable[[np.ndarray], Sequence[str]], config: DedupConfig
) -> np.ndarray:
    """One uint32 row per item of ``known`` (Arrow binary): the item itself when it is a signature of this
    config's size (signatures made per file), read from the Arrow buffer with no bytes object a row;
    otherwise signed from its text, ``texts_at(rows)`` giving the texts of those rows only."""
    rows = np.empty((len(known), config.num_perm), dtype=np.uint32)
    whole = pc.fill_null(pc.equal(pc.binary_length(known), 4 * config.num_perm), False).to_numpy(False)
    if whole.any():
        fixed = known.filter(pa.array(whole)).cast(pa.binary(4 * config.num_perm))  # one buffer of rows
        values = np.frombuffer(fixed.buffers()[1], dtype="<u4", offset=4 * config.num_perm * fixed.offset)
        rows[whole] = values[: len(fixed) * config.num_perm].reshape(-1, config.num_perm)
    missing = np.flatnonzero(~whole)
    if len(missing):
        rows[missing] = [np.frombuffer(signature_of(t, config), "<u4") for t in texts_at(missing)]
    return rows


def signature_slices(texts: Sequence[str], config: DedupConfig, known: Sequence[bytes] = ()):
    """The signatures of ``texts`` as (start, rows) slices of ``SIGNATURE_ROWS`` rows (``signature_block``;
    ``known``: one per text, or none). Both are read a slice at a time (they may be read from disk:
    ``store/records.py``)."""
    n = len(texts)
    for lo in range(0, n, SIGNATURE_ROWS):
        hi = min(n, lo + SIGNATURE_ROWS)
        blobs = arrow_slice(known, slice(lo, hi), pa.binary())
        yield lo, signature_block(blobs, lambda rows, lo=lo: take_rows(texts, lo + rows), config)


def arrow_slice(values: Sequence, records: slice, type_: pa.DataType) -> pa.Array:
    """``values[records]`` as one Arrow array, read as Arrow when it comes from disk (``StagedColumn``);
    nulls when ``values`` is empty (no signatures given)."""
    if hasattr(values, "arrow"):
        return values.arrow(records)
    return pa.array(list(values[records]) if len(values) else [None] * (records.stop - records.start), type_)


SIGNATURE_ROWS = 1 << 14


def signature_matrix(texts: Sequence[str], config: DedupConfig, known: Sequence[bytes] = ()) -> np.ndarray:
    """The signatures of ``texts`` (``signature_slices``), one uint32 row per text."""
    matrix = np.empty((len(texts), config.num_perm), dtype=np.uint32)
    for lo, rows in signature_slices(texts, config, known):
        matrix[lo : lo + len(rows)] = rows
    return matrix


def take_rows(values: Sequence, indices: np.ndarray) -> list:
    """``values`` at ``indices``, read at once where they are read from disk (``StagedColumn.take``); an
    empty sequence stays empty (no signatures given)."""
    if hasattr(values, "take"):
        return values.take(indices)
    return [values[i] for i in indices.tolist()] if len(values) else []
