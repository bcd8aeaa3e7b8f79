"""Per-file results cached with the dataset, so a scheduled re-run only processes new or changed files.

Key: the file's path and sha256, the code fingerprint and the policy hash — any change to one of them
is a miss. Entries are JSON (not pickle: a cache folder must never be a way to run code), written
aside and renamed into place. After a published run, entries that run did not use are removed, so
files deleted from the input leave nothing behind.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import hashlib
import json
import os
from pathlib import Path

from corpus_hygiene.models import FileResult, Header, Record, Rejected, SourceFile, SourceReport
from corpus_hygiene.runinfo import code_fingerprint


def cache_dir_for(dataset_dir: Path | str) -> Path:
    dataset_dir = Path(dataset_dir)
    return dataset_dir.parent / f".{dataset_dir.name}.cache"


def _to_json(result: FileResult) -> dict:
    data = dataclasses.asdict(result)
    # the signatures of all records as one base64 string (decoded once per file, then sliced)
    data["signatures"] = base64.b64encode(b"".join(rec.signature for rec in result.records)).decode("ascii")
    data["signature_size"] = len(result.records[0].signature) if result.records else 0
    for rec in data["records"]:
        del rec["signature"]
        if rec["text_raw"] == rec["text"]:
            rec["text_raw"] = None  # stored once; read back as the same object
    return data


_REPEATED = ("source_file", "venue", "header_label", "header_lang", "lang")


def _from_json(data: dict) -> FileResult:
    src = dict(data["source"])
    src["header"] = Header(**src["header"]) if src["header"] else None
    src["decode_repairs"] = tuple(src["decode_repairs"])
    blob, size = base64.b64decode(data["signatures"]), data["signature_size"]
    if len(blob) != size * len(data["records"]):
        raise ValueError("signatures do not match the records")
    shared: dict = {}  # one object per distinct value: JSON makes a new string for every record
    records = []
    for i, r in enumerate(data["records"]):
        for k in _REPEATED:
            r[k] = shared.setdefault(r[k], r[k])
        fixes = tuple(r["fixes"])
        r["fixes"] = shared.setdefault(fixes, fixes)
        if r["text_raw"] is None:
            r["text_raw"] = r["text"]
        records.append(Record(**r, signature=blob[i * size : (i + 1) * size]))
    return FileResult(
        source=SourceReport(**src),
        records=records,
        rejected=[Rejected(**r) for r in data["rejected"]],
        checked=data["checked"],
    )


class FileCache:
    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def key(self, rel_path: str, sha256: str, policy_sha256: str) -> str:
        raw = json.dumps([rel_path, sha256, code_fingerprint(), policy_sha256])
        return hashlib.sha256(raw.encode()).hexdigest()

    def get(self, key: str) -> FileResult | None:
        path = self.folder / f"{key}.json.gz"
        try:
            return _from_json(json.loads(gzip.decompress(path.read_bytes())))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent or damaged: recomputed and overwritten

    def put(self, key: str, result: FileResult) -> None:
        path = self.folder / f"{key}.json.gz"
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(
            gzip.compress(json.dumps(_to_json(result), ensure_ascii=False).encode(), compresslevel=3)
        )
        os.replace(tmp, path)

    def hits(self, files: list[SourceFile], sha256_of: dict[str, str | None], policy_sha256: str) -> dict:
        """The cached results of the files whose content hash (``sha256_of``) has an entry, by path:
        the flow looks these up itself and maps a task over the other files only."""
        found = {}
        for src in files:
            sha = sha256_of.get(src.rel_path)
            result = self.get(self.key(src.rel_path, sha, policy_sha256)) if sha else None
            if result is not None:
                result.source.cached = True
                found[src.rel_path] = result
        return found

    def missing(
        self, files: list[SourceFile], sha256_of: dict[str, str | None], policy_sha256: str
    ) -> list[SourceFile]:
        """The files without an entry (by name only: nothing is read)."""
        return [
            src
            for src in files
            if not (sha := sha256_of.get(src.rel_path))
            or not (self.folder / f"{self.key(src.rel_path, sha, policy_sha256)}.json.gz").is_file()
        ]

    def keys_of(self, sources: list[SourceReport], policy_sha256: str) -> set[str]:
        return {self.key(s.source_file, s.sha256, policy_sha256) for s in sources if s.sha256}

    def prune(self, keep: set[str]) -> int:
        """Remove every entry not in ``keep``; return how many were removed."""
        removed = 0
        for path in self.folder.glob("*.json.gz"):
            if path.name.removesuffix(".json.gz") not in keep:
                path.unlink(missing_ok=True)
                removed += 1
        return removed
