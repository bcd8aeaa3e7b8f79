"""Per-file results cached with the dataset, so a scheduled re-run only processes new or changed files.

Key: the file's path and sha256, the code fingerprint and the policy hash — any change to one of them
is a miss. Entries are JSON (not pickle: a cache folder must never be a way to run code), the records
as columns, compressed with zstd, with a digest of their bytes; written aside and renamed into place.
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

from corpus_hygiene.atomic import TMP, write_atomic
from corpus_hygiene.models import FileResult, Header, Record, Rejected, SourceFile, SourceReport
from corpus_hygiene.runinfo import code_fingerprint


def cache_dir_for(dataset_dir: Path | str) -> Path:
    dataset_dir = Path(dataset_dir)
    return dataset_dir.parent / f".{dataset_dir.name}.cache"


# One entry: a format tag, the JSON's length and its compressed length (8 bytes each, little-endian), a
# blake2b digest of the rest, the JSON compressed with zstd, then the records' signatures and text keys as
# they are (random bytes: zstd cannot shrink them, and in the JSON, as base64, they would be a third of
# what orjson parses). Columns rather than one object a record, and zstd rather than gzip, halve the time
# a re-run reads entries.
SUFFIX = ".json.zst"
_MAGIC = b"chz3"
_DIGEST = 16
_HEAD = 20 + _DIGEST  # tag, JSON length, compressed length, digest
_CODEC = pa.Codec("zstd", compression_level=3)
_ENTRY_GLOBS = (f"*{SUFFIX}", "*.json.gz")  # the second: the format before, removed by the next prune
_BINARY = ("signature", "text_key")  # stored after the JSON, fixed-size values end to end
_FIELDS = tuple(f.name for f in dataclasses.fields(Record) if f.name not in _BINARY)  # in __init__ order


def _column(values: list) -> list | dict:
    """A column of one repeated value (a file's source_file, venue, header…) is stored once."""
    return {"one": values[0]} if values and values.count(values[0]) == len(values) else values


def _values(column: list | dict, n: int) -> list:
    return [column["one"]] * n if isinstance(column, dict) else column


def _to_json(result: FileResult) -> dict:
    recs = result.records
    columns = {name: [getattr(rec, name) for rec in recs] for name in _FIELDS}
    # text_raw equal to text (nothing was repaired) is stored once; read back as the same object
    columns["text_raw"] = [None if rec.text_raw == rec.text else rec.text_raw for rec in recs]
    return {
        "source": dataclasses.asdict(result.source),
        "n_records": len(recs),
        "records": {name: _column(values) for name, values in columns.items()},
        "signature_size": len(recs[0].signature) if recs else 0,  # the values follow the JSON
        "text_key_size": len(recs[0].text_key) if recs else 0,
        "rejected": [dataclasses.asdict(r) for r in result.rejected],
        "checked": result.checked,
    }


def _from_json(data: dict, tail: bytes) -> FileResult:
    """``tail``: the records' signatures, then their text keys, each of the size the JSON gives."""
    src = dict(data["source"])
    src["header"] = Header(**src["header"]) if src["header"] else None
    src["decode_repairs"] = tuple(src["decode_repairs"])
    n, sig, key = data["n_records"], data["signature_size"], data["text_key_size"]
    if not isinstance(n, int) or len(tail) != n * (sig + key):
        raise ValueError("signatures and text keys do not match the records")
    signatures = [tail[i * sig : (i + 1) * sig] for i in range(n)]
    text_keys = [tail[n * sig + i * key : n * sig + (i + 1) * key] for i in range(n)]
    columns = {name: _values(data["records"][name], n) for name in _FIELDS}
    if any(len(values) != n for values in columns.values()):
        raise ValueError("record columns of different lengths")
    raws = zip(columns["text_raw"], columns["text"], strict=True)
    columns["text_raw"] = [text if raw is None else raw for raw, text in raws]
    shared: dict = {}  # one object per distinct value: JSON makes a new one for every record
    columns["fixes"] = [shared.setdefault(f := tuple(fixes), f) for fixes in columns["fixes"]]
    columns["lost_words"] = [tuple(words) for words in columns["lost_words"]]
    columns["lang"] = [shared.setdefault(lang, lang) for lang in columns["lang"]]
    return FileResult(
        source=SourceReport(**src),
        records=list(map(Record, *columns.values(), signatures, text_keys)),
        rejected=[Rejected(**r) for r in data["rejected"]],
        checked=data["checked"],
    )


def encode(result: FileResult) -> bytes:
    raw = orjson.dumps(_to_json(result))
    packed = _CODEC.compress(raw, asbytes=True)
    recs = result.records
    signatures, text_keys = b"".join(r.signature for r in recs), b"".join(r.text_key for r in recs)
    n = len(recs)
    if recs and (len(signatures), len(text_keys)) != (n * len(recs[0].signature), n * len(recs[0].text_key)):
        raise ValueError("records with signatures or text keys of different sizes")
    body = b"".join([packed, signatures, text_keys])
    digest = hashlib.blake2b(body, digest_size=_DIGEST).digest()
    return _MAGIC + len(raw).to_bytes(8, "little") + len(packed).to_bytes(8, "little") + digest + body


def decode(blob: bytes) -> FileResult:
    if blob[:4] != _MAGIC:
        raise ValueError("not a corpus-hygiene cache entry (or one of an earlier format)")
    size, packed = int.from_bytes(blob[4:12], "little"), int.from_bytes(blob[12:20], "little")
    if hashlib.blake2b(blob[_HEAD:], digest_size=_DIGEST).digest() != blob[20:_HEAD]:
        raise ValueError("the entry does not match its digest")
    if packed > len(blob) - _HEAD or size > 1024 * packed + (1 << 20):  # no huge allocation if damaged
        raise ValueError("damaged cache entry")
    raw = _CODEC.decompress(blob[_HEAD : _HEAD + packed], decompressed_size=size, asbytes=True)
    return _from_json(orjson.loads(raw), blob[_HEAD + packed :])


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
        path = self.folder / f"{key}{SUFFIX}"
        try:
            return decode(path.read_bytes())
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
    ) -> Iterator[FileResult]:
        """The cached results of the files whose content hash (``sha256_of``) has an entry, one at a
        time: the flow stages these itself and maps a task over the other files only."""
        for src in files:
            sha = sha256_of.get(src.rel_path)
            result = self.get(self.key(src.rel_path, sha, policy_sha256)) if sha else None
            if result is not None:
                result.source.cached = True
                yield result

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
