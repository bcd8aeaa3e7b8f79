"""Facts about a run that go into the manifest: run id, code fingerprint, library versions."""

from __future__ import annotations

import hashlib
import importlib.util
import secrets
from datetime import UTC, datetime
from functools import lru_cache
from importlib import metadata
from pathlib import Path

LIBRARIES = (
    "ftfy",
    "pylatexenc",
    "langdetect",
    "datasketch",
    "pandera",
    "prefect",
    "pyarrow",
    "charset-normalizer",
    "wordfreq",
)


def new_run_id(now: datetime | None = None) -> str:
    """Sortable and unique: UTC time to the second plus 6 random hex digits."""
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Version plus a hash of every source and policy file of the package, flows/ and checks/ included.

    Changes whenever the code that shapes outputs changes, even between releases.
    """
    import corpus_hygiene

    digest = hashlib.sha256(corpus_hygiene.__version__.encode())
    for name in ("corpus_hygiene", "flows", "checks"):
        # the folders, found without importing the modules (flows/ imports Prefect)
        root = Path(next(iter(importlib.util.find_spec(name).submodule_search_locations)))
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".toml", ".j2") and "__pycache__" not in path.parts:
                digest.update(f"{name}/{path.relative_to(root).as_posix()}".encode())
                digest.update(path.read_bytes())
    return f"{corpus_hygiene.__version__}+{digest.hexdigest()[:12]}"


def library_versions() -> dict[str, str]:
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out
