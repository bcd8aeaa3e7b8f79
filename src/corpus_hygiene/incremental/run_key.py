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
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from checks import Policy
from corpus_hygiene.incremental.file_cache import published_manifest
from corpus_hygiene.ingest.discover import Discovery, InputRootError, discover, open_source
from corpus_hygiene.models import SourceReport
from corpus_hygiene.publish.beside import Beside
from corpus_hygiene.publish.dataset import sha256_file
from corpus_hygiene.publish.read import DatasetError, load_manifest, verify_checksums, version_folder
from corpus_hygiene.reasons import Reason
from corpus_hygiene.reference.source import ReferenceError, open_references
from corpus_hygiene.runinfo import code_fingerprint, library_versions


def run_key(
    discovery: Discovery, sha256_of: Mapping[str, str | None], policy: Policy, references: Sequence = ()
) -> str:
    """``sha256_of`` maps each discovered file's path to its content hash (None: could not be read);
    ``references``: the run's (``reference.source.Reference``)."""
    parts = {
        "references": [r.describe() | {"text": r.text_column} for r in references],
        "files": sorted((f.rel_path, sha256_of.get(f.rel_path)) for f in discovery.files),
        "refused": sorted((r.source_file, r.reason, r.detail) for r in discovery.refused),
        "skipped": sorted(discovery.skipped),
        "policy": policy.sha256,
        "code": code_fingerprint(),
        "libraries": library_versions(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


READ_AGAIN = "read again"  # never a sha256: a run key holding it matches no later run


def hashes_read(sources: Iterable[SourceReport]) -> dict[str, str | None]:
    """The hash each source was read with, for the run key a run publishes; a file that changed while
    read counts as not read, so the next run reads it again rather than find this run "unchanged"."""
    return {
        s.source_file: READ_AGAIN if s.problem == Reason.CHANGED_DURING_RUN else s.sha256 for s in sources
    }


# The hashes of this process's last ``hash_inputs``, by file identity and change time: the CLI's
# unchanged check and the flow it starts hash the same inputs, and ``serve`` hashes them every run.
# Any write to a file changes its ctime, which no user call can set back.
_LAST_HASHED: dict[tuple[int, ...], str] = {}


def hash_inputs(discovery: Discovery) -> dict[str, str | None]:
    """The sha256 of every discovered file, read as ``process_file`` reads it (no symlink followed); a
    file unchanged since this process last hashed it is not read again."""
    global _LAST_HASHED
    out: dict[str, str | None] = {}
    hashed: dict[tuple[int, ...], str] = {}
    for src in discovery.files:
        try:
            with open_source(src) as fd:
                st = os.fstat(fd)
                identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                if (known := _LAST_HASHED.get(identity)) is None:
                    digest = hashlib.sha256()
                    while batch := os.read(fd, 8 << 20):
                        digest.update(batch)
                    known = digest.hexdigest()
                out[src.rel_path] = hashed[identity] = known
        except OSError:
            out[src.rel_path] = None
    _LAST_HASHED = hashed
    return out


def current_version(dataset_dir: Path | str, key: str, reports_dir: Path | str | None = None) -> str | None:
    """The name of the published version when it was made from ``key``, its manifest is the one the
    last run published (recorded in the cache), its files match it and (given ``reports_dir``) its
    report is there; else None, and the run makes it again. The key is compared first: the files are
    read for their checksums only when it matches, so a run with any change does not read the whole
    published dataset for nothing."""
    folder = version_folder(dataset_dir)
    try:
        if load_manifest(folder).get("run_key") != key:
            return None
        if reports_dir is not None and not (Path(reports_dir) / f"{folder.name}.html").is_file():
            return None  # the reports folder lost this version's report: a run writes one again
        if published_manifest(Beside(dataset_dir).cache) != sha256_file(folder / "manifest.json"):
            return None  # not the manifest a run of this cache published (edited, or no record of it)
        verify_checksums(folder)
    except (DatasetError, OSError):
        return None
    return folder.name


def unchanged_version(
    input_dir: str,
    dataset_dir: str,
    reports_dir: str,
    policy: Policy,
    max_file_mb: float | None = None,
    references: tuple[list[str], str | None] = ([], None),
) -> str | None:
    """The published version's name when it already is the output of these inputs; else None, also on
    any error (the flow then runs and reports it). The CLI's short-cut before Prefect is imported.
    ``references``: the command line's reference paths and text column (``flows.hygiene.find_references``)."""
    given, column = references
    memo = Beside(dataset_dir).cache / "references" / "hashes.json"
    try:
        discovery = discover(input_dir, policy.file_limit(max_file_mb))
        refs = open_references(
            policy.reference_paths(), given, column or policy.reference["text_column"], memo
        )
    except (InputRootError, ReferenceError):
        return None
    key = run_key(discovery, hash_inputs(discovery), policy, refs)
    return current_version(dataset_dir, key, reports_dir)
