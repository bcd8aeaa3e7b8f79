"""A reference as the user names it (``--reference PATH``, ``[reference] paths``): a published
corpus-hygiene dataset folder (its ``records.parquet``), a Parquet file, or a folder of Parquet files;
the text column the user names, and an id column when there is one. Its content hash names its index
(``index.py``); a file unchanged since this cache last hashed it (same size, mtime and ctime) is not
read again."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from corpus_hygiene.atomic import json_document, write_atomic
from corpus_hygiene.publish.dataset import sha256_file

ID_COLUMNS = ("record_id", "id")  # the first one a reference has points at its rows


class ReferenceError(Exception):
    """A reference cannot be read: missing, not Parquet, or without the text column."""


@dataclass(frozen=True, slots=True)
class Reference:
    name: str  # the path as the user gave it: what the duplicates table and the report name
    root: Path  # the folder the files' names are relative to
    files: tuple[str, ...]  # its Parquet files, relative to root, sorted
    text_column: str
    id_column: str | None
    sha256: str  # of the files' names and bytes, in order
    clean: bool  # a corpus-hygiene dataset: its texts are cleaned already

    def describe(self) -> dict:
        return {"name": self.name, "sha256": self.sha256, "files": list(self.files), "id": self.id_column}


def _files(path: Path) -> tuple[Path, tuple[str, ...], bool]:
    """(root, Parquet files relative to it, whether it is a corpus-hygiene dataset)."""
    if path.is_file():
        return path.parent, (path.name,), False
    if (path / "manifest.json").is_file() and (path / "records.parquet").is_file():
        return Path(os.path.realpath(path)), ("records.parquet",), True
    found = sorted(p.relative_to(path).as_posix() for p in path.rglob("*.parquet") if p.is_file())
    if not found:
        raise ReferenceError(f"reference {path}: no .parquet file in it")
    return path, tuple(found), False


def _stat_key(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def content_hash(root: Path, files: tuple[str, ...], memo_path: Path | None) -> str:
    """sha256 over the files' names and bytes; each file's own hash is looked up in ``memo_path`` (a JSON
    of path → [stat key, sha256]) and read only when its stat key changed."""
    memo = {}
    if memo_path is not None and memo_path.is_file():
        try:
            memo = json.loads(memo_path.read_bytes())
        except ValueError:
            memo = {}
    whole, changed = hashlib.sha256(), False
    for name in files:
        path = root / name
        key, known = _stat_key(path), memo.get(str(path))
        if not known or known[0] != key:
            memo[str(path)], changed = [key, sha256_file(path)], True
        whole.update(f"{name}\0{memo[str(path)][1]}\n".encode())
    if changed and memo_path is not None:
        try:
            memo_path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(memo_path, json_document(memo))
        except OSError:
            pass  # the memo only saves a read: the next run hashes again
    return whole.hexdigest()


def open_reference(name: str, text_column: str = "text", memo_path: Path | None = None) -> Reference:
    """The reference at ``name`` (a path), checked to be readable Parquet with ``text_column``."""
    path = Path(name)
    if not path.exists():
        raise ReferenceError(f"reference {name}: no such file or folder")
    root, files, clean = _files(path)
    names = set(ID_COLUMNS)
    for file in files:
        try:
            schema = pq.read_schema(root / file)
        except (OSError, ValueError) as exc:
            raise ReferenceError(f"reference {name}: {file} is not a readable Parquet file ({exc})") from exc
        if text_column not in schema.names:
            raise ReferenceError(
                f"reference {name}: {file} has no column {text_column!r} (it has {', '.join(schema.names)}); "
                "name the text column with --reference-text-column"
            )
        names &= set(schema.names)
    id_column = next((c for c in ID_COLUMNS if c in names), None)
    try:
        sha256 = content_hash(root, files, memo_path)
    except OSError as exc:
        raise ReferenceError(f"reference {name}: cannot be read ({exc.strerror or exc})") from exc
    return Reference(name, root, files, text_column, id_column, sha256, clean)


def open_references(
    policy_paths: list[str],
    given: list[str],
    text_column: str,
    memo_path: Path | None,
    writes: Path | None = None,
) -> list[Reference]:
    """The policy's references, then the command line's (each once, in that order); ``writes``: the
    dataset the run publishes, which is no reference of its own."""
    names = list(dict.fromkeys([*policy_paths, *given]))
    if writes is not None and (problem := self_reference(names, writes)):
        raise ReferenceError(problem)
    return [open_reference(name, text_column, memo_path) for name in names]


def self_reference(names: list[str], dataset_dir: Path | str) -> str | None:
    """Why one of the references is the dataset a run writes (its link, a version of it), or None: its
    records would all be found there, and the new version would drop them."""
    dataset = Path(dataset_dir).absolute()
    versions = Path(os.path.realpath(dataset.parent / f".{dataset.name}.versions"))
    for name in names:
        real = Path(os.path.realpath(name))
        if real == Path(os.path.realpath(dataset)) or real.is_relative_to(versions):
            return f"reference {name} is the dataset this run writes ({dataset_dir}): name a copy of it"
    return None


def unchanged_root(described: dict) -> Path | None:
    """The folder of a reference as a manifest describes it (``Reference.describe``) when it is still at
    its path with the same files and bytes; else None (moved, changed or unreadable)."""
    try:
        root, files, _ = _files(Path(described["name"]))
        same = files == tuple(described["files"]) and content_hash(root, files, None) == described["sha256"]
    except (OSError, ReferenceError):
        return None
    return root if same else None
