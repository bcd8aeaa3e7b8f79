"""The published dataset: Arrow schemas of the output contract, atomic publishing, and reading back.

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
import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from corpus_hygiene.atomic import json_document
from corpus_hygiene.pipeline.rows import to_arrow
from corpus_hygiene.publish.owner import OWNER_MARK, dataset_dir_problem, made_by_this_tool

SCHEMA_VERSION = 2

PII_TYPE = pa.struct(
    [pa.field("email", pa.int32(), nullable=False), pa.field("phone", pa.int32(), nullable=False)]
)
RECORDS_SCHEMA = pa.schema(
    [
        pa.field("record_id", pa.string(), nullable=False),
        pa.field("source_file", pa.string(), nullable=False),
        pa.field("source_line", pa.int32(), nullable=False),
        pa.field("venue", pa.string()),
        pa.field("year", pa.int32()),
        pa.field("header_label", pa.string(), nullable=False),
        pa.field("header_lang", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("text_raw", pa.string(), nullable=False),
        pa.field("lang", pa.string(), nullable=False),
        pa.field("lang_confidence", pa.float64(), nullable=False),
        pa.field("n_chars", pa.int32(), nullable=False),
        pa.field("n_words", pa.int32(), nullable=False),
        pa.field("mean_word_length", pa.float64(), nullable=False),
        pa.field("alpha_share", pa.float64(), nullable=False),
        pa.field("stopword_share", pa.float64()),
        pa.field("repeated_ngram_share", pa.float64(), nullable=False),
        pa.field("n_urls", pa.int32(), nullable=False),
        pa.field("pii", PII_TYPE, nullable=False),
        pa.field("fixes", pa.list_(pa.string()), nullable=False),
        pa.field("lost_words", pa.list_(pa.string()), nullable=False),
        pa.field("dup_count", pa.int32(), nullable=False),
        pa.field("also_in", pa.list_(pa.string()), nullable=False),
    ]
)
DUPLICATES_SCHEMA = pa.schema(
    [
        pa.field("source_file", pa.string(), nullable=False),
        pa.field("source_line", pa.int32(), nullable=False),
        pa.field("canonical_id", pa.string(), nullable=False),
        pa.field("canonical_ref", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("similarity", pa.float64(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("text_raw", pa.string(), nullable=False),
    ]
)
QUARANTINE_SCHEMA = pa.schema(
    [
        pa.field("source_file", pa.string(), nullable=False),
        pa.field("source_line", pa.int32()),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("detail", pa.string(), nullable=False),
        pa.field("text_raw", pa.string()),
    ]
)
PAIRS_SCHEMA = pa.schema(
    [
        pa.field("source_file", pa.string(), nullable=False),
        pa.field("source_line", pa.int32(), nullable=False),
        pa.field("record_id", pa.string(), nullable=False),
        pa.field("candidate_id", pa.string(), nullable=False),
        pa.field("candidate_ref", pa.string(), nullable=False),
        pa.field("similarity", pa.float64(), nullable=False),
        pa.field("merged", pa.bool_(), nullable=False),
    ]
)
TABLES = {
    "records": RECORDS_SCHEMA,
    "duplicates": DUPLICATES_SCHEMA,
    "quarantine": QUARANTINE_SCHEMA,
    "pairs": PAIRS_SCHEMA,
}


class PublishError(Exception):
    """The dataset folder cannot be published to (say why and what to do)."""


class DatasetError(Exception):
    """A published dataset is missing, incomplete, or does not match its manifest."""


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


def versions_dir(dataset_dir: Path) -> Path:
    return dataset_dir.parent / f".{dataset_dir.name}.versions"


def records_dir(dataset_dir: Path | str, run_id: str) -> Path:
    """Where run ``run_id`` stages its records (``pipeline/staging.py``): beside the dataset, on its disk."""
    dataset_dir = Path(dataset_dir)
    return dataset_dir.parent / f".{dataset_dir.name}.records-{run_id}"


def remove_staged_records(dataset_dir: Path | str) -> None:
    """Remove every run's staged records beside the dataset: runs hold the dataset's lock, so any there
    before or after a run are no run's any more. A folder of that name without the mark is not ours."""
    pattern = records_dir(dataset_dir, "*")
    for folder in pattern.parent.glob(pattern.name):
        if made_by_this_tool(folder):
            shutil.rmtree(folder, ignore_errors=True)


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
        self.versions = versions_dir(self.dataset_dir)
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
    path = versions_dir(Path(dataset_dir)) / f"{run_id}.partial"
    if made_by_this_tool(path):
        shutil.rmtree(path, ignore_errors=True)


def stage_version(dataset_dir: Path | str, run_id: str) -> StagedVersion | None:
    """A new version to stage, or None when the folder cannot take one (publishing says why, later)."""
    try:
        return StagedVersion(dataset_dir, run_id)
    except (PublishError, OSError):
        return None


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


def version_folder(dataset_dir: Path | str) -> Path:
    """The version DATASET_DIR points to, resolved once: a reader that opens every file there reads one
    version, even while a publish switches the link."""
    return Path(os.path.realpath(dataset_dir))


def load_manifest(dataset_dir: Path | str) -> dict:
    """The manifest, checked to be one: a dict listing every table among its outputs with a sha256."""
    path = Path(dataset_dir) / "manifest.json"
    if not path.is_file():
        raise DatasetError(f"{dataset_dir} has no manifest.json: not a published corpus-hygiene dataset")
    try:
        manifest = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise DatasetError(f"{path.name} in {dataset_dir} cannot be read as JSON ({exc})") from exc
    outputs = manifest.get("outputs") if isinstance(manifest, dict) else None
    listed = isinstance(outputs, dict) and all(
        isinstance(meta, dict) and isinstance(meta.get("sha256"), str) for meta in outputs.values()
    )
    if not listed or any(f"{name}.parquet" not in outputs for name in TABLES):
        raise DatasetError(
            f"{path.name} in {dataset_dir} is incomplete: it does not list every table's sha256"
        )
    return manifest


def verify_checksums(dataset_dir: Path | str) -> dict:
    """Check every output file of the version DATASET_DIR points to against its manifest; return the
    manifest. Pass ``version_folder(DATASET_DIR)`` to read the tables from the version checked."""
    dataset_dir = version_folder(dataset_dir)
    manifest = load_manifest(dataset_dir)
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise DatasetError(
            f"schema version {manifest.get('schema_version')!r} in {dataset_dir}, this code reads "
            f"version {SCHEMA_VERSION}"
        )
    for name, meta in manifest["outputs"].items():
        path = dataset_dir / name
        if not path.is_file():
            raise DatasetError(f"{path} is listed in the manifest but missing")
        if sha256_file(path) != meta["sha256"]:
            raise DatasetError(
                f"{path} does not match its checksum in the manifest (modified after publishing)"
            )
    return manifest


def to_frame(table: pa.Table):
    """Arrow → pandas with nullable integers (a null year stays <NA>, not a float NaN)."""
    import pandas as pd

    return table.to_pandas(types_mapper={pa.int32(): pd.Int32Dtype()}.get)


def rows_to_frame(rows: list[dict], name: str):
    return to_frame(pa.Table.from_pylist(rows, schema=TABLES[name]))


def arrow_slices(rows: Sequence[dict], name: str, size: int = ROW_GROUP) -> Iterator[pa.Table]:
    """The table as Arrow tables of ``size`` rows, made one at a time (for the gates)."""
    for lo in range(0, max(len(rows), 1), size):
        yield to_arrow(rows, lo, lo + size, TABLES[name])


def read_tables(dataset_dir: Path | str) -> dict[str, pa.Table]:
    return {name: pq.read_table(Path(dataset_dir) / f"{name}.parquet") for name in TABLES}


def validate_dataset(dataset_dir: Path | str) -> tuple[dict, list[str]]:
    """Checksums and schema version (raises DatasetError), then every contract check: (manifest, failures)."""
    from corpus_hygiene.checks.gates import schema_failures

    folder = version_folder(dataset_dir)
    manifest = verify_checksums(folder)
    tables = read_tables(folder)
    frames = {name: to_frame(table) for name, table in tables.items()}
    return manifest, count_failures(
        manifest, {name: t.num_rows for name, t in tables.items()}
    ) + schema_failures(frames)


def count_failures(manifest: dict, rows: dict[str, int]) -> list[str]:
    """The manifest's counts against the tables' rows, and the accounting identity: a manifest edited
    alone is caught here (a table edited with its checksum too is caught only where it breaks these)."""
    failures = []
    for name, n in rows.items():
        listed = manifest["outputs"].get(f"{name}.parquet", {}).get("rows")
        if listed is not None and listed != n:
            failures.append(f"manifest.outputs.{name}.parquet.rows: says {listed}, the table holds {n}")
    counts = manifest.get("counts", {})
    for key, table in (("kept", "records"), ("duplicates", "duplicates"), ("quarantined", "quarantine")):
        if key in counts and counts[key] != rows.get(table):
            failures.append(
                f"manifest.counts.{key}: says {counts[key]}, {table}.parquet holds {rows.get(table)}"
            )
    placed = sum(rows.get(t, 0) for t in ("records", "duplicates", "quarantine"))
    if "ingested" in counts and counts["ingested"] != placed:
        failures.append(f"manifest.counts.ingested: says {counts['ingested']}, the tables hold {placed} rows")
    return failures


def read_dataset(dataset_dir: Path | str, *, table: str = "records", arrow: bool = False):
    """A table of a published dataset (``records``, ``duplicates``, ``quarantine`` or ``pairs``), after
    the same checks as ``hygiene validate``.

    Returns a pandas DataFrame, or a pyarrow Table with ``arrow=True``. Raises DatasetError when the
    dataset does not match its manifest or the contract, ValueError for a table that is not one of them.
    """
    if table not in TABLES:
        raise ValueError(f"no table {table!r} in a corpus-hygiene dataset: use one of {', '.join(TABLES)}")
    folder = version_folder(dataset_dir)
    manifest, failures = validate_dataset(folder)
    if failures:
        raise DatasetError(f"{dataset_dir} breaks the contract: " + "; ".join(failures[:5]))
    table = pq.read_table(folder / f"{table}.parquet")
    return table if arrow else to_frame(table)
