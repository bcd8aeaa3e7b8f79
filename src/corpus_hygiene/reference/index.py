"""A reference's index, made once and cached by its content hash: for each row with a text, its
pointer (file, row, id), its cleaned text, exact key (the run's ``record_id`` bytes), MinHash signature
and CJK flag, in one Arrow IPC file; and its short texts' n-grams (``contamination.py``) in another.
Both are memory-mapped when read: a run holds the exact keys and what it touches, not the texts."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from corpus_hygiene.clean import clean_text
from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.keys import dedup_key, record_id
from corpus_hygiene.dedup.lsh import cjk_mask
from corpus_hygiene.dedup.signatures import signature_of
from corpus_hygiene.reference.contamination import Contamination, ItemIndex, index_items
from corpus_hygiene.reference.source import Reference, ReferenceError
from corpus_hygiene.runinfo import code_fingerprint

READ_ROWS = 8192


def _schema(config: DedupConfig) -> pa.Schema:
    return pa.schema(
        [
            ("file", pa.int32()),
            ("row", pa.int64()),
            ("id", pa.string()),
            ("text", pa.string()),
            ("key", pa.binary(16)),
            ("signature", pa.binary(4 * config.num_perm)),
            ("cjk", pa.bool_()),
        ]
    )


ITEM_SCHEMA = pa.schema([("span", pa.int32()), ("hash", pa.uint64()), ("item", pa.int64())])


def _clean(text: str, already: bool) -> str:
    """A generic reference's text cleaned as a run's records are (markup, mojibake); a failure keeps
    the text as it is (one odd row must not stop a run)."""
    if already:
        return text
    try:
        return clean_text(text, None).text
    except Exception:  # noqa: BLE001 - any library's failure on one row
        return unicodedata.normalize("NFC", " ".join(text.split()))


def _batches(ref: Reference):
    """(file number, first row, texts, ids) of the reference's rows, ``READ_ROWS`` at a time."""
    columns = [ref.text_column] + ([ref.id_column] if ref.id_column else [])
    for number, name in enumerate(ref.files):
        row = 0
        for batch in pq.ParquetFile(ref.root / name).iter_batches(READ_ROWS, columns=columns):
            texts = batch.column(0).cast(pa.string()).to_pylist()
            ids = batch.column(1).cast(pa.string()).to_pylist() if ref.id_column else [None] * len(texts)
            yield number, row, texts, ids
            row += len(texts)


def build(ref: Reference, config: DedupConfig, params: Contamination, path: Path) -> None:
    """Index ``ref`` into ``path`` (and ``path``'s item file), written whole or not at all."""
    schema = _schema(config)
    items_text, items_row, n = [], [], 0
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name)
    os.close(fd)
    try:
        with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
            for number, first, texts, ids in _batches(ref):
                at = [k for k, t in enumerate(texts) if t and t.strip()]
                cleaned = [_clean(texts[k], ref.clean) for k in at]
                keys = [bytes.fromhex(record_id(dedup_key(t))) for t in cleaned]
                columns = [
                    pa.array([number] * len(at), pa.int32()),
                    pa.array([first + k for k in at], pa.int64()),
                    pa.array([ids[k] for k in at], pa.string()),
                    pa.array(cleaned, pa.string()),
                    pa.array(keys, pa.binary(16)),
                    pa.array([signature_of(t, config) for t in cleaned], pa.binary(4 * config.num_perm)),
                    pa.array(cjk_mask(cleaned)),
                ]
                writer.write_batch(pa.record_batch(columns, schema=schema))
                # a cheap bound first: ``index_items`` counts the words as ``tokens`` does
                short = [k for k, t in enumerate(cleaned) if len(t.split()) <= 2 * params.max_words]
                items_text += [cleaned[k] for k in short]
                items_row += [n + k for k in short]
                n += len(at)
        items = index_items(items_text, np.array(items_row, np.int64), n, params)
        table = pa.table([items.span, items.hash, items.item], schema=ITEM_SCHEMA)
        with pa.OSFile(f"{tmp}.items", "wb") as sink, pa.ipc.new_file(sink, ITEM_SCHEMA) as writer:
            writer.write_table(table)
        os.replace(f"{tmp}.items", _items_path(path))
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, f"{tmp}.items"):
            if os.path.exists(leftover):
                os.unlink(leftover)


def _items_path(path: Path) -> Path:
    return path.with_suffix(".items.arrow")


def index_path(folder: Path, ref: Reference, config: DedupConfig, params: Contamination) -> Path:
    """Where ``ref``'s index lives: named by its content and everything that shapes the index."""
    settings = [ref.text_column, ref.id_column, config.fingerprint(), repr(params), code_fingerprint()]
    digest = hashlib.sha256(json.dumps([ref.sha256, *settings]).encode()).hexdigest()[:32]
    return folder / f"{digest}.arrow"


@dataclass(frozen=True, eq=False)
class IndexedReference:
    """A reference's index, memory-mapped (``table``), with its exact keys sorted in memory."""

    ref: Reference
    table: pa.Table
    keys: np.ndarray  # S16, sorted
    key_rows: np.ndarray  # each sorted key's row
    items: ItemIndex
    built: bool  # made by this run, not read from the cache

    def __len__(self) -> int:
        return self.table.num_rows

    def signature_slices(self):
        """(first row, uint32 rows) of the signatures, a record batch at a time, without a copy."""
        start, column = 0, self.table.column("signature")
        for chunk in column.chunks:
            values = np.frombuffer(chunk.buffers()[1], "<u4", len(chunk) * chunk.type.byte_width // 4,
                                   chunk.offset * chunk.type.byte_width)  # fmt: skip
            yield start, values.reshape(len(chunk), -1)
            start += len(chunk)

    def texts(self, rows: np.ndarray) -> list[str]:
        return self.table.column("text").take(pa.array(rows, pa.int64())).to_pylist()

    def pointers(self, rows: np.ndarray) -> tuple[list[str | None], list[str]]:
        """The rows' ids (None when the reference has no id column) and ``file#row`` references."""
        picked = self.table.select(["file", "row", "id"]).take(pa.array(rows, pa.int64())).to_pydict()
        refs = [f"{self.ref.files[f]}#{r}" for f, r in zip(picked["file"], picked["row"], strict=True)]
        return picked["id"], refs


def _read(path: Path) -> pa.Table:
    return pa.ipc.open_file(pa.memory_map(str(path))).read_all()


def load(ref: Reference, config: DedupConfig, params: Contamination, folder: Path) -> IndexedReference:
    """``ref``'s index from ``folder``, made there first when it is not (or cannot be read)."""
    path, built = index_path(folder, ref, config, params), False
    try:
        table, items = _read(path), _read(_items_path(path))
    except (OSError, pa.ArrowInvalid):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            build(ref, config, params, path)
        except (OSError, pa.ArrowException) as exc:  # a column that is not text, a damaged file, a full disk
            raise ReferenceError(f"reference {ref.name} cannot be indexed: {exc}") from exc
        table, items, built = _read(path), _read(_items_path(path)), True
    keys = np.frombuffer(table.column("key").combine_chunks().buffers()[1], "S16", table.num_rows)
    order = np.argsort(keys, kind="stable")
    counts = np.bincount(items.column("item").to_numpy(), minlength=table.num_rows).astype(np.int32)
    item_index = ItemIndex(*(items.column(c).to_numpy() for c in ITEM_SCHEMA.names), counts)
    return IndexedReference(ref, table, keys[order], order, item_index, built)


def contamination_of(reference_policy: dict) -> Contamination:
    """The containment measure's values from the policy's ``[reference]`` table."""
    prefix = "contamination_"
    return Contamination(**{k[len(prefix) :]: v for k, v in reference_policy.items() if k.startswith(prefix)})


def load_all(
    refs: list[Reference], config: DedupConfig, params: Contamination, folder: Path
) -> list[IndexedReference]:
    """The references' indexes; the folder's other indexes (references gone or changed) are removed."""
    indexed = [load(ref, config, params, folder) for ref in refs]
    used = {index_path(folder, ref, config, params) for ref in refs}
    used |= {_items_path(p) for p in used}
    for path in set(folder.glob("*.arrow")) - used if folder.is_dir() else ():
        path.unlink(missing_ok=True)
    return indexed
