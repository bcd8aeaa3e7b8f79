"""Per-file results cached with the dataset, so a scheduled re-run only processes new or changed files.

Key: the file's path and sha256, the code fingerprint and the policy hash — any change to one of them
is a miss. Entries are JSON and an Arrow IPC file of the records (not pickle: a cache folder must never
be a way to run code), compressed with zstd, with a digest of their bytes; written aside and renamed into
place.
After a published run, entries that run did not use are removed, so files deleted from the input leave
nothing behind. Everything here is disposable: an entry that cannot be read, fails its digest or cannot
be written is recomputed (``FileCache.problems`` says which, for the run's log), never an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from corpus_hygiene.atomic import TMP, write_atomic
from corpus_hygiene.models import FileResult, Header, Record, Rejected, SourceFile, SourceReport
from corpus_hygiene.runinfo import code_fingerprint
from corpus_hygiene.store.records import STAGED_SCHEMA, ipc_file, record_table, records_of

# One entry: a format tag, a blake2b digest of the rest, the length of the next part (8 bytes,
# little-endian), then two parts compressed with zstd, each after its length: the JSON (the source report,
# the rejected paragraphs), and the records as an Arrow IPC file (``store.records.STAGED_SCHEMA``). A hit is
# staged as the table it is read as, not as a Python object a field.
SUFFIX = ".entry"
_MAGIC = b"chz4"
_DIGEST = 16
_HEAD = 4 + _DIGEST  # tag, digest
_CODEC = pa.Codec("zstd", compression_level=1)
_ENTRY_GLOBS = (f"*{SUFFIX}", "*.json.zst", "*.json.gz")  # and the formats before: removed by the next prune


def _to_json(result: FileResult) -> dict:
    return {
        "source": dataclasses.asdict(result.source),
        "n_records": len(result.records),
        "rejected": [dataclasses.asdict(r) for r in result.rejected],
        "checked": result.checked,
    }


def _from_json(data: dict) -> FileResult:
    src = dict(data["source"])
    src["header"] = Header(**src["header"]) if src["header"] else None
    src["decode_repairs"] = tuple(src["decode_repairs"])
    return FileResult(
        source=SourceReport(**src),
        rejected=[Rejected(**r) for r in data["rejected"]],
        checked=data["checked"],
    )


_RAW = STAGED_SCHEMA.get_field_index("text_raw")


def _zstd(data: bytes) -> bytes:
    """``data`` compressed, after its length (8 bytes)."""
    return len(data).to_bytes(8, "little") + _CODEC.compress(data, asbytes=True)


def _unzstd(data: bytes) -> bytes:
    size = int.from_bytes(data[:8], "little")
    if len(data) < 8 or size > 1024 * len(data) + (1 << 20):  # no huge allocation if damaged
        raise ValueError("damaged cache entry")
    return _CODEC.decompress(data[8:], decompressed_size=size, asbytes=True)


def _records_ipc(records: list[Record]) -> bytes:
    """The records as an IPC file; a text_raw equal to its text (nothing was repaired) is stored once,
    as null."""
    if not records:
        return b""
    table = record_table(records)
    raw = table["text_raw"]
    return ipc_file(table.set_column(_RAW, "text_raw", pc.if_else(pc.equal(raw, table["text"]), None, raw)))


def _records_table(data: bytes, n: int) -> pa.Table:
    table = pa.ipc.open_file(pa.py_buffer(data)).read_all() if data else STAGED_SCHEMA.empty_table()
    table = table.set_column(_RAW, "text_raw", pc.coalesce(table["text_raw"], table["text"]))
    if table.schema != STAGED_SCHEMA or table.num_rows != n:
        raise ValueError("the records do not match the entry")
    return table


def encode(result: FileResult) -> bytes:
    head = _zstd(orjson.dumps(_to_json(result)))
    body = len(head).to_bytes(8, "little") + head + _zstd(_records_ipc(result.records))
    return _MAGIC + hashlib.blake2b(body, digest_size=_DIGEST).digest() + body


def read_entry(blob: bytes) -> tuple[FileResult, pa.Table]:
    """An entry's result without its records, and its records as a table of ``STAGED_SCHEMA``."""
    if blob[:4] != _MAGIC:
        raise ValueError("not a corpus-hygiene cache entry (or one of an earlier format)")
    body = blob[_HEAD:]
    if hashlib.blake2b(body, digest_size=_DIGEST).digest() != blob[4:_HEAD]:
        raise ValueError("the entry does not match its digest")
    head = int.from_bytes(body[:8], "little") + 8
    data = orjson.loads(_unzstd(body[8:head]))
    return _from_json(data), _records_table(_unzstd(body[head:]), data["n_records"])


def decode(blob: bytes) -> FileResult:
    result, table = read_entry(blob)
    result.records = records_of(table)
    return result


def _remove(path: Path) -> None:
    shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink(missing_ok=True)


class FileCache:
    """Raises OSError only when the folder cannot be made (the flow then runs without a cache)."""

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.problems: list[str] = []  # what went wrong reading or writing entries, for the run's log
        for stale in self.folder.glob(f"*{TMP}*"):  # left by a run that died writing (one run at a time)
            stale.unlink(missing_ok=True)

    def key(self, rel_path: str, sha256: str, policy_sha256: str) -> str:
        raw = json.dumps([rel_path, sha256, code_fingerprint(), policy_sha256])
        return hashlib.sha256(raw.encode()).hexdigest()

    def get(self, key: str) -> FileResult | None:
        entry = self._read(key)
        if entry is None:
            return None
        result, table = entry
        result.records = records_of(table)
        return result

    def _read(self, key: str) -> tuple[FileResult, pa.Table] | None:
        path = self.folder / f"{key}{SUFFIX}"
        try:
            return read_entry(path.read_bytes())
        except FileNotFoundError:
            return None
        except Exception as exc:  # noqa: BLE001 - damaged in any way: recomputed and overwritten
            self.problems.append(f"cache entry {key[:12]}… unreadable ({type(exc).__name__}: {exc})")
            return None

    def put(self, key: str, result: FileResult) -> None:
        path = self.folder / f"{key}{SUFFIX}"
        try:
            if path.is_dir():  # something else took the entry's name
                _remove(path)
            write_atomic(path, encode(result))
        except OSError as exc:
            self.problems.append(f"cache entry {key[:12]}… not written ({exc.strerror or exc})")

    def hits(
        self, files: list[SourceFile], sha256_of: dict[str, str | None], policy_sha256: str
    ) -> Iterator[tuple[FileResult, pa.Table]]:
        """The cached results of the files whose content hash (``sha256_of``) has an entry, one at a
        time, each without its records and with them as a table (``read_entry``): the flow stages these
        itself and maps a task over the other files only."""
        for src in files:
            sha = sha256_of.get(src.rel_path)
            entry = self._read(self.key(src.rel_path, sha, policy_sha256)) if sha else None
            if entry is not None:
                entry[0].source.cached = True
                yield entry

    def keys_of(self, sources: list[SourceReport], policy_sha256: str) -> set[str]:
        return {self.key(s.source_file, s.sha256, policy_sha256) for s in sources if s.sha256}

    def prune(self, keep: set[str]) -> int:
        """Remove every entry not in ``keep``; return how many were removed."""
        removed = 0
        for path in (p for pattern in _ENTRY_GLOBS for p in self.folder.glob(pattern)):
            if path.name.removesuffix(SUFFIX) not in keep or not path.name.endswith(SUFFIX):
                try:
                    _remove(path)
                    removed += 1
                except OSError as exc:
                    self.problems.append(f"cache entry {path.name} not removed ({exc.strerror or exc})")
        return removed

    # The entries whose records passed every row-level check of the output contract in a published run
    # (their keys hold the code fingerprint and the policy hash, so the checks and their limits were the
    # same): the gates validate the rows of the other files only (checks/gates.py).
    CHECKED = "contract-checked.json"

    def contract_checked(self) -> set[str]:
        """Keys of entries whose record rows a published run found to meet the contract (empty when
        the list is absent or unreadable: every row is validated)."""
        try:
            keys = json.loads((self.folder / self.CHECKED).read_text("utf-8"))
        except Exception:  # noqa: BLE001 - absent or damaged: every row is validated
            return set()
        return {k for k in keys if isinstance(k, str)} if isinstance(keys, list) else set()

    def set_contract_checked(self, keys: set[str]) -> None:
        """After a published run: its entries' keys (all its rows passed the gates), written aside and
        renamed into place."""
        try:
            write_atomic(self.folder / self.CHECKED, json.dumps(sorted(keys)).encode("utf-8"))
        except OSError as exc:
            self.problems.append(f"{self.CHECKED} not written ({exc.strerror or exc})")

    def checked_files(self, sources: list[SourceReport], policy_sha256: str) -> frozenset[str]:
        """The files read from this cache whose rows a published run validated (``CHECKED``)."""
        checked = self.contract_checked()
        return frozenset(
            s.source_file
            for s in sources
            if s.cached and s.sha256 and self.key(s.source_file, s.sha256, policy_sha256) in checked
        )

    # The sha256 of the manifest the last published run wrote: a dataset is "unchanged" only while its
    # manifest is that one (a table edited together with its checksum is not a run's output).
    PUBLISHED = "published-manifest.sha256"

    def after_publish(self, sources: list[SourceReport], policy_sha256: str, manifest_sha256: str) -> None:
        """Forget the entries of files gone or changed; mark the published ones' rows as validated;
        remember the manifest published."""
        keys = self.keys_of(sources, policy_sha256)
        self.prune(keys)
        self.set_contract_checked(keys)
        try:
            write_atomic(self.folder / self.PUBLISHED, manifest_sha256.encode())
        except OSError as exc:
            self.problems.append(f"{self.PUBLISHED} not written ({exc.strerror or exc})")

    def entries(self) -> list[Path]:
        return sorted(self.folder.glob(f"*{SUFFIX}"))


def published_manifest(folder: Path) -> str | None:
    """The sha256 of the manifest the last published run wrote (``FileCache.PUBLISHED``), or None."""
    try:
        return (folder / FileCache.PUBLISHED).read_text("ascii")
    except (OSError, ValueError):
        return None
