"""corpus-hygiene: turn folders of raw abstract lists into a clean, validated Parquet dataset.

The library lives here (pure stages, no Prefect). The distribution installs two sibling packages
beside it from the repository's top level: ``flows`` (Prefect orchestration) and ``checks`` (the
quality contract).
"""

from __future__ import annotations

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("corpus-hygiene")
except _metadata.PackageNotFoundError:  # running from a bare source tree
    __version__ = "0.0.0+source"


def read_dataset(path, *, table: str = "records", arrow: bool = False):
    """A table (records, duplicates, quarantine, pairs) of the dataset published at ``path``, after the
    checks of ``hygiene validate``: a pandas DataFrame, or a pyarrow Table with ``arrow=True`` (see
    corpus_hygiene.publish.dataset)."""
    from corpus_hygiene.publish.read import read_dataset as _read

    return _read(path, table=table, arrow=arrow)
