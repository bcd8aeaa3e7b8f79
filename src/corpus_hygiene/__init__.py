"""corpus-hygiene: turn folders of raw abstract lists into a clean, validated Parquet dataset.

The library lives here (pure stages, no Prefect). Two sibling folders at the repository top level
belong to the package as well: ``flows/`` (Prefect orchestration) and ``checks/`` (the quality
contract). A wheel packs them inside the package; in a source checkout we add the repository root to
this package's search path so that ``corpus_hygiene.flows`` and ``corpus_hygiene.checks`` import the
same files either way.
"""

from __future__ import annotations

from importlib import metadata as _metadata
from pathlib import Path as _Path

try:
    __version__ = _metadata.version("corpus-hygiene")
except _metadata.PackageNotFoundError:  # running from a bare source tree
    __version__ = "0.0.0+source"

_here = _Path(__file__).resolve().parent
_repo_root = _here.parents[1]
if not (_here / "flows").is_dir() and (_repo_root / "flows" / "__init__.py").is_file():
    __path__.append(str(_repo_root))  # noqa: F821 - __path__ is defined for packages


def read_dataset(path, *, table: str = "records", arrow: bool = False):
    """A table (records, duplicates, quarantine, pairs) of the dataset published at ``path``, after the
    checks of ``hygiene validate``: a pandas DataFrame, or a pyarrow Table with ``arrow=True`` (see
    corpus_hygiene.publish.dataset)."""
    from corpus_hygiene.publish.dataset import read_dataset as _read

    return _read(path, table=table, arrow=arrow)
