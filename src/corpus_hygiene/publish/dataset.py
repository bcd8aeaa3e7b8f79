"""The published dataset: staging a new version (its Parquet files written as the gates read them) and
publishing it atomically. Reading it back: ``publish/read.py``.

Layout on disk. DATASET_DIR is a symlink to one complete version folder beside it:

    data/clean -> .clean.versions/20261202T180102Z-3fa2c1
    data/.clean.versions/20261202T180102Z-3fa2c1/{records,duplicates,quarantine,pairs}.parquet, manifest.json

A new version is written in full (files fsynced, manifest last), then the symlink is replaced with
``os.replace`` — one atomic rename. A crash at any moment leaves DATASET_DIR pointing at either the
previous complete version or the new one; readers never see a half-written dataset. The previous
version (the link's target before the switch) is kept for one more run so a reader holding it open is
not cut off; any other folder there (a run that died mid-publish) is removed by the next publish.
Readers resolve the link once (``version_folder``) and read every file from that folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from checks.gates import evaluate_gates
from checks.schemas import SCHEMA_VERSION, TABLES
from corpus_hygiene.atomic import json_document
from corpus_hygiene.publish.beside import Beside
from corpus_hygiene.publish.owner import OWNER_MARK, dataset_dir_problem, made_by_this_tool
from corpus_hygiene.store.rows import to_arrow


class PublishError(Exception):
    """The dataset folder cannot be published to (say why and what to do)."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


PARQUET_OPTIONS = {"compression": "zstd", "write_statistics": True, "use_dictionary": True}
# Rows converted to Arrow (and pandas, for the gates) at a time, and so a Parquet row group: the
# gates' memory above the rest of the run's is a few slices of this size (docs/design.md §6).
ROW_GROUP = 8_192


def write_slices(rows: Sequence[dict], schema: pa.Schema, path: Path) -> Iterator[pa.Table]:
    """Deterministic Parquet: fixed schema, no pandas metadata, rows in the order given, converted and
    written a row group at a time (a whole-table Arrow copy would hold every row twice). Each row
    group's Arrow table is also yielded, for a caller that reads the rows too (the gates): the rows are
    converted once for both. Each row group is written in a thread while the caller works on the slice
    (pyarrow encodes and compresses without the GIL). The file is complete, and fsynced, once the
    iterator is exhausted."""
    from concurrent.futures import ThreadPoolExecutor

    # the pool closes first: a write under way ends before the file does (also when the caller stops)
    with (
        pq.ParquetWriter(path, schema, **PARQUET_OPTIONS) as writer,
        ThreadPoolExecutor(1, thread_name_prefix="parquet") as pool,
    ):
        pending = None
        for lo in range(0, max(len(rows), 1), ROW_GROUP):
            table = to_arrow(rows, lo, lo + ROW_GROUP, schema)
            if pending is not None:
                pending.result()  # row groups in order
            if len(table):  # an empty table has no row group: a 0-row one fails Hugging Face's reader
                pending = pool.submit(writer.write_table, table)
            yield table
            del table  # the writer holds it until written, not the making of the next one
        if pending is not None:
            pending.result()
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def _adopt_existing(dataset_dir: Path, versions: Path) -> None:
    """Make room for the symlink when DATASET_DIR is a real folder (first run, or a copied dataset)."""
    if problem := dataset_dir_problem(dataset_dir):
        raise PublishError(problem)
    if dataset_dir.is_symlink() or not dataset_dir.exists():
        return
    if next(dataset_dir.iterdir(), None) is None:
        dataset_dir.rmdir()
        return
    # A real folder holding a dataset this tool wrote: move it among the versions, then link to it, so
    # the swap below stays a single rename.
    legacy = versions / "00000000T000000Z-adopted"  # sorts before every run id
    if legacy.exists():
        if not made_by_this_tool(legacy):
            raise PublishError(f"{legacy} is in the way and is not this tool's; move it")
        shutil.rmtree(legacy)
    os.rename(dataset_dir, legacy)
    os.symlink(os.path.relpath(legacy, dataset_dir.parent), dataset_dir)


class StagedVersion:
    """A new version being written in ``versions/<run_id>.partial``, where no reader looks: the tables
    (``write``, or ``write_slices`` for a caller that reads each slice too), then ``commit`` (the other
    files, the manifest, the atomic switch) or ``discard``. ``publish`` is the three steps at once; the
    flow stages the tables while the gates read them and commits only when every gate passed."""

    def __init__(self, dataset_dir: Path | str, run_id: str) -> None:
        self.dataset_dir = Path(dataset_dir)
        self.run_id = run_id
        self.dataset_dir.parent.mkdir(parents=True, exist_ok=True)
        self.versions = Beside(self.dataset_dir).versions
        self.versions.mkdir(exist_ok=True)
        for stale in self.versions.glob("*.partial"):  # left by a run that died mid-publish
            if made_by_this_tool(stale):
                shutil.rmtree(stale, ignore_errors=True)
        for stale in self.dataset_dir.parent.glob(f".{self.dataset_dir.name}.link-*"):  # likewise
            if stale.is_symlink():
                stale.unlink()
        _adopt_existing(self.dataset_dir, self.versions)
        self.path = self.versions / f"{run_id}.partial"
        self.path.mkdir()
        (self.path / OWNER_MARK).write_text(run_id + "\n", "utf-8")
        self.outputs: dict[str, dict] = {}
        self.open = True  # until committed or discarded

    def write_slices(self, name: str, rows: Sequence[dict]) -> Iterator[pa.Table]:
        path = self.path / f"{name}.parquet"
        yield from write_slices(rows, TABLES[name], path)
        self.outputs[f"{name}.parquet"] = {"sha256": sha256_file(path), "rows": len(rows)}

    def write(self, name: str, rows: Sequence[dict]) -> None:
        for _ in self.write_slices(name, rows):
            pass

    def discard(self) -> None:
        self.open = False
        discard_partial(self.dataset_dir, self.run_id)

    def commit(
        self,
        manifest: dict,
        checkpoint: Callable[[str], None] = lambda step: None,
        extra_files: dict[str, str | Callable[[dict], str]] | None = None,
    ) -> Path:
        """Complete the version and switch DATASET_DIR to it atomically. Returns the version path.
        ``extra_files``: name → content, or a function of the outputs written so far (name → sha256…)."""
        missing = [name for name in TABLES if f"{name}.parquet" not in self.outputs]
        if not self.open:
            raise PublishError(f"version {self.run_id} cannot be published: it was committed or discarded")
        if missing:
            raise PublishError(f"version {self.run_id} cannot be published: tables not written: {missing}")
        self.open = False
        staging, outputs = self.path, dict(self.outputs)
        for name, content in (extra_files or {}).items():  # schema.json, README.md…: before the manifest
            path = staging / name
            path.write_text(content(outputs) if callable(content) else content, "utf-8")
            outputs[name] = {"sha256": sha256_file(path)}
        full_manifest = dict(manifest, schema_version=SCHEMA_VERSION, run_id=self.run_id, outputs=outputs)
        (staging / OWNER_MARK).unlink()  # from here the manifest lists every file the version holds
        tmp = staging / "manifest.json.tmp"
        tmp.write_bytes(json_document(full_manifest))
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, staging / "manifest.json")
        _fsync_dir(staging)
        checkpoint("wrote manifest")

        final = self.versions / self.run_id
        os.rename(staging, final)
        _fsync_dir(self.versions)
        checkpoint("version complete")

        dataset_dir = self.dataset_dir
        published = Path(os.path.realpath(dataset_dir)).name if dataset_dir.is_symlink() else None
        link_tmp = dataset_dir.parent / f".{dataset_dir.name}.link-{self.run_id}"
        if link_tmp.is_symlink():
            link_tmp.unlink()
        os.symlink(os.path.relpath(final, dataset_dir.parent), link_tmp)
        checkpoint("link ready")
        os.replace(link_tmp, dataset_dir)  # the atomic switch
        _fsync_dir(dataset_dir.parent)
        checkpoint("switched")
        _prune(self.versions, keep={final.name, published})
        return final


def publish(
    dataset_dir: Path | str,
    run_id: str,
    tables: dict[str, Sequence[dict]],
    manifest: dict,
    checkpoint: Callable[[str], None] = lambda step: None,
    extra_files: dict | None = None,
) -> Path:
    """Write a complete new version and switch DATASET_DIR to it atomically. Returns the version path.

    ``checkpoint(step)`` is called between steps; tests use it to kill the process at every point.
    """
    staged = StagedVersion(dataset_dir, run_id)
    for name in TABLES:
        staged.write(name, tables[name])
        checkpoint(f"wrote {name}")
    return staged.commit(manifest, checkpoint, extra_files)


def discard_partial(dataset_dir: Path | str, run_id: str) -> None:
    """Remove run ``run_id``'s version being staged, if any (a run interrupted before it committed)."""
    path = Beside(dataset_dir).versions / f"{run_id}.partial"
    if made_by_this_tool(path):
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def staged_version(dataset_dir: Path | str, run_id: str) -> Iterator[StagedVersion | None]:
    """A new version to stage, or None when the folder cannot take one (publishing says why, later). It
    is discarded when the block ends in any exception, an interrupt included, before it was committed."""
    try:
        try:
            staged = StagedVersion(dataset_dir, run_id)
        except (PublishError, OSError):
            staged = None
        yield staged
    except BaseException:
        discard_partial(dataset_dir, run_id)
        raise


def staged_slices(tables: dict[str, Sequence[dict]], staged: StagedVersion | None) -> dict:
    """Each table as Arrow slices for the gates to read; with ``staged``, each slice is also written to
    the new version's Parquet file as it is read, so the rows become Arrow once, not twice."""
    if staged is None:
        return {name: arrow_slices(rows, name) for name, rows in tables.items()}
    return {name: staged.write_slices(name, rows) for name, rows in tables.items()}


def commit_or_publish(
    dataset_dir: Path | str,
    run_id: str,
    tables: dict[str, Sequence[dict]],
    manifest: dict,
    extra_files: dict,
    staged: StagedVersion | None,
) -> Path:
    """Commit the version the gates staged; without one (or on a retry), write it all from the rows."""
    if staged is not None and staged.open:
        try:
            return staged.commit(manifest, extra_files=extra_files)
        except OSError:
            staged.discard()
            raise
    return publish(dataset_dir, run_id, tables, manifest, extra_files=extra_files)


def _prune(versions: Path, keep: set) -> None:
    """Remove every complete version but ``keep`` (the new one and the one published before it)."""
    for path in versions.iterdir():
        if path.is_dir() and not path.name.endswith(".partial") and path.name not in keep:
            if made_by_this_tool(path):
                shutil.rmtree(path, ignore_errors=True)


def arrow_slices(rows: Sequence[dict], name: str, size: int = ROW_GROUP) -> Iterator[pa.Table]:
    """The table as Arrow tables of ``size`` rows, made one at a time (for the gates)."""
    for lo in range(0, max(len(rows), 1), size):
        yield to_arrow(rows, lo, lo + size, TABLES[name])


def gate_and_stage(
    asm, policy, staged: StagedVersion | None = None, checked_before=frozenset(), scratch=None
):
    """The gates over the assembled tables, a slice at a time, each slice also written to the ``staged``
    version's Parquet file; ``scratch``: where the keys of the checks across rows are spilled. When
    writing the version fails, it is discarded and the gates read the rows alone (publishing then
    writes the tables)."""
    tables, reasons = asm.tables(), asm.quarantine_reasons
    if staged is not None:
        try:
            return evaluate_gates(
                asm.counts, staged_slices(tables, staged), policy, checked_before, scratch, reasons
            )
        except OSError:
            staged.discard()
    return evaluate_gates(asm.counts, staged_slices(tables, None), policy, checked_before, scratch, reasons)
