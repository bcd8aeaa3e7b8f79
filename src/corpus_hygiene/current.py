"""Is the published dataset already what this run would publish? The unchanged re-run short-cut.

Every published manifest carries ``run_key``: a hash of everything that decides the dataset's bytes —
each discovered file's path and sha256 (or, for a file refused unread, its size and reason), the
skipped links, the policy file's sha256, the code fingerprint and the library versions. Outputs are
deterministic in exactly these (tests/test_determinism.py), so a run whose key equals the published
one, over a dataset whose files still match their checksums, would publish the same bytes: it does no
work at all, not even the per-file cache reads. Any change (one byte of one file, a new file, a
removed file, another policy) gives another key and a normal, incremental run.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from corpus_hygiene.checks import Policy
from corpus_hygiene.dataset import DatasetError, load_manifest, verify_checksums
from corpus_hygiene.ingest.discover import Discovery, open_source
from corpus_hygiene.runinfo import code_fingerprint, library_versions


def run_key(discovery: Discovery, sha256_of: Mapping[str, str | None], policy: Policy) -> str:
    """``sha256_of`` maps each discovered file's path to its content hash (None: could not be read)."""
    parts = {
        "files": sorted((f.rel_path, sha256_of.get(f.rel_path)) for f in discovery.files),
        "refused": sorted((r.source_file, r.reason, r.detail) for r in discovery.refused),
        "skipped": sorted(discovery.skipped),
        "policy": policy.sha256,
        "code": code_fingerprint(),
        "libraries": library_versions(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


# sha256 by (path, inode, size, mtime, ctime) of the files of the last call: the CLI's pre-check and the
# flow hash the same files seconds apart (0.14 s at 100k records); a file written since differs in its
# times (ns) or size and is read again
_HASHED: dict[tuple, str] = {}


def hash_inputs(discovery: Discovery) -> dict[str, str | None]:
    """The sha256 of every discovered file, read as ``process_file`` reads it (no symlink followed)."""
    global _HASHED
    out: dict[str, str | None] = {}
    hashed: dict[tuple, str] = {}
    for src in discovery.files:
        try:
            with open_source(src) as fd:
                st = os.fstat(fd)
                stamp = (str(src.abs_path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                if (known := _HASHED.get(stamp)) is None:
                    digest = hashlib.sha256()
                    while batch := os.read(fd, 8 << 20):
                        digest.update(batch)
                    known = digest.hexdigest()
                out[src.rel_path] = hashed[stamp] = known
        except OSError:
            out[src.rel_path] = None
    _HASHED = hashed  # only these files' (a long-lived `hygiene serve` keeps no more)
    return out


def current_version(dataset_dir: Path | str, key: str) -> str | None:
    """The name of the published version when it was made from ``key`` and is intact; else None.
    The key is compared first: the files are read for their checksums only when it matches (a run
    with any change read the whole published dataset twice for nothing: 89 MB at 100k records)."""
    try:
        if load_manifest(dataset_dir).get("run_key") != key:
            return None
        verify_checksums(dataset_dir)
    except (DatasetError, OSError, ValueError, KeyError):
        return None
    return Path(os.path.realpath(dataset_dir)).name
