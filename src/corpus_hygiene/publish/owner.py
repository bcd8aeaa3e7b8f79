"""What this tool made, and may therefore move or remove: nothing else is ever touched.

Light on purpose (no Arrow): the CLI asks it before any work.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

# Written in a version folder while this tool writes it (removed when the version is complete): a
# ``.partial`` folder without it is not this tool's to remove.
OWNER_MARK = ".corpus-hygiene-partial"


def made_by_this_tool(folder: Path) -> bool:
    """``folder`` holds nothing but what this tool wrote there: a version being written (it carries
    ``OWNER_MARK``), or a complete version, every file of which its manifest lists. A folder the user
    added a file to, or any other folder, is left alone by cleanup, retention and adoption."""
    try:
        names = {path.name for path in folder.iterdir()}
        if OWNER_MARK in names:
            return True
        manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    outputs = manifest.get("outputs") if isinstance(manifest, dict) else None
    return isinstance(outputs, dict) and "run_id" in manifest and names <= set(outputs) | {"manifest.json"}


def dataset_dir_problem(dataset_dir: Path | str) -> str | None:
    """Why DATASET_DIR cannot take a dataset, or None: it may be missing, an empty folder, this tool's link
    or a version this tool wrote (a copied dataset); anything else is the user's and is left alone."""
    dataset_dir = Path(dataset_dir)
    if dataset_dir.is_symlink() or not dataset_dir.exists():
        return None
    if not dataset_dir.is_dir():
        return f"--dataset-dir {str(dataset_dir)!r} exists and is not a folder; choose another --dataset-dir"
    if next(dataset_dir.iterdir(), None) is None or made_by_this_tool(dataset_dir):
        return None
    return (
        f"--dataset-dir {str(dataset_dir)!r} holds files this tool did not write; "
        "choose an empty or new --dataset-dir"
    )


def overlap_problem(input_dir: Path | str, dataset_dir: Path | str, reports_dir: Path | str) -> str | None:
    """Why these folders cannot serve one run, or None: one holds another (a run would read its own
    outputs, or a publish would replace the reports), counting the dataset's ``.NAME.*`` folders beside it
    (versions, cache) as the dataset's."""
    dataset = Path(dataset_dir).resolve()
    folders = {
        "input folder": Path(input_dir).resolve(),
        "--dataset-dir": dataset,
        "--reports-dir": Path(reports_dir).resolve(),
    }

    def within(path: Path, other: Path) -> bool:
        owned = [other, *other.parent.glob(f".{other.name}.*")] if other == dataset else [other]
        return any(path == o or o in path.parents for o in owned)

    for (name, a), (other, b) in combinations(folders.items(), 2):
        if within(a, b) or within(b, a):
            return f"{name} {str(a)!r} and {other} {str(b)!r} overlap: give folders apart"
    return None
