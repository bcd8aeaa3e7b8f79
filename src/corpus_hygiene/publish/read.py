"""Reading a published dataset back: the version its link points to, checked against its manifest and
the contract (``hygiene validate``, ``corpus_hygiene.read_dataset``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from checks.gates import schema_failures
from checks.schemas import SCHEMA_VERSION, TABLES, to_frame
from corpus_hygiene.publish.dataset import sha256_file
from corpus_hygiene.reference.source import unchanged_root


class DatasetError(Exception):
    """A published dataset is missing, incomplete, or does not match its manifest."""


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


def read_tables(dataset_dir: Path | str) -> dict[str, pa.Table]:
    return {name: pq.read_table(Path(dataset_dir) / f"{name}.parquet") for name in TABLES}


def validate_dataset(dataset_dir: Path | str) -> tuple[dict, list[str]]:
    """Checksums and schema version (raises DatasetError), then every contract check: (manifest, failures)."""
    folder = version_folder(dataset_dir)
    manifest = verify_checksums(folder)
    tables = read_tables(folder)
    frames = {name: to_frame(table) for name, table in tables.items()}
    return manifest, count_failures(
        manifest, {name: t.num_rows for name, t in tables.items()}
    ) + schema_failures(frames) + pointer_failures(manifest, tables["duplicates"])


def pointer_failures(manifest: dict, duplicates: pa.Table) -> list[str]:
    """The duplicates of kind 'reference' whose pointer does not resolve: no such row (file#row) in the
    reference the manifest names, or a row of another id. A reference not at its path any more is not
    checked (``hygiene validate`` says so)."""
    failures = []
    rows = duplicates.filter(pc.equal(duplicates["kind"], "reference")).select(
        ["reference", "canonical_id", "canonical_ref"]).to_pylist()  # fmt: skip
    listed = {ref["name"] for ref in manifest.get("references", ())}
    failures += sorted({f"duplicates.reference: {r['reference']} is no reference of the manifest"
                        for r in rows if r["reference"] not in listed})  # fmt: skip
    for ref in manifest.get("references", ()):
        if (root := unchanged_root(ref)) is None:
            continue
        ids = {}  # file → its id column (None a row, without one)
        for row in (r for r in rows if r["reference"] == ref["name"]):
            file, _, at = row["canonical_ref"].rpartition("#")
            if file in ref["files"] and file not in ids:
                table = pq.read_table(root / file, columns=[ref["id"]] if ref["id"] else [])
                ids[file] = (
                    table.column(0).cast(pa.string()).to_pylist() if ref["id"] else [None] * len(table)
                )
            column = ids.get(file, ())
            if not (int(at) < len(column) and column[int(at)] == row["canonical_id"]):
                failures.append(
                    f"duplicates.canonical_ref: {row['canonical_ref']} is no row of id "
                    f"{row['canonical_id']!r} in {ref['name']}"
                )
    return failures


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
