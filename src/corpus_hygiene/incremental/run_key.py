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
from collections.abc import Iterable, Mapping
from pathlib import Path

from checks import Policy, PolicyError, load_policy
from corpus_hygiene.incremental.file_cache import cache_dir_for, published_manifest
from corpus_hygiene.ingest.discover import Discovery, InputRootError, discover, open_source
from corpus_hygiene.models import SourceReport
from corpus_hygiene.publish.dataset import sha256_file
from corpus_hygiene.publish.read import DatasetError, load_manifest, verify_checksums, version_folder
from corpus_hygiene.reasons import Reason
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


READ_AGAIN = "read again"  # never a sha256: a run key holding it matches no later run


def hashes_read(sources: Iterable[SourceReport]) -> dict[str, str | None]:
    """The hash each source was read with, for the run key a run publishes; a file that changed while
    read counts as not read, so the next run reads it again rather than find this run "unchanged"."""
    return {
        s.source_file: READ_AGAIN if s.problem == Reason.CHANGED_DURING_RUN else s.sha256 for s in sources
    }


def hash_inputs(discovery: Discovery) -> dict[str, str | None]:
    """The sha256 of every discovered file, read as ``process_file`` reads it (no symlink followed)."""
    out: dict[str, str | None] = {}
    for src in discovery.files:
        try:
            with open_source(src) as fd:
                digest = hashlib.sha256()
                while batch := os.read(fd, 8 << 20):
                    digest.update(batch)
                out[src.rel_path] = digest.hexdigest()
        except OSError:
            out[src.rel_path] = None
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
        if published_manifest(cache_dir_for(dataset_dir)) != sha256_file(folder / "manifest.json"):
            return None  # not the manifest a run of this cache published (edited, or no record of it)
        verify_checksums(folder)
    except (DatasetError, OSError):
        return None
    return folder.name


def unchanged_version(
    input_dir: str,
    dataset_dir: str,
    reports_dir: str,
    policy_path: str | None = None,
    max_file_mb: float | None = None,
) -> str | None:
    """The published version's name when it already is the output of these inputs; else None, also on
    any error (the flow then runs and reports it). The CLI's short-cut before Prefect is imported."""
    try:
        policy = load_policy(policy_path)
        discovery = discover(input_dir, policy.file_limit(max_file_mb))
    except (PolicyError, InputRootError):
        return None
    return current_version(dataset_dir, run_key(discovery, hash_inputs(discovery), policy), reports_dir)
