"""Every path a run keeps beside the dataset folder DATASET_DIR: hidden siblings in its parent folder, so
on the dataset's disk and never inside the folder consumers read.

    .NAME.lock              one run at a time (publish/lock.py)
    .NAME.cache/            per-file results and the verified-pair memo (incremental/)
    .NAME.versions/         the complete versions DATASET_DIR links to, and the one being staged
    .NAME.records-RUN_ID/   a run's staged records while it runs (store/records.py)
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from corpus_hygiene.publish.owner import made_by_this_tool


class Beside:
    def __init__(self, dataset_dir: Path | str) -> None:
        self.dataset = Path(dataset_dir)
        self.lock = self._sibling("lock")
        self.cache = self._sibling("cache")
        self.versions = self._sibling("versions")

    def _sibling(self, what: str) -> Path:
        return self.dataset.parent / f".{self.dataset.name}.{what}"

    def records(self, run_id: str) -> Path:
        return self._sibling(f"records-{run_id}")

    def absent(self) -> list[Path]:
        """The lock, cache and versions paths that do not exist yet: what a run would create."""
        return [p for p in (self.lock, self.cache, self.versions) if not os.path.lexists(p)]

    def remove_staged_records(self) -> None:
        """Remove every run's staged records: runs hold the dataset's lock, so any there before or after
        a run are no run's any more. A folder of that name without the owner mark is not ours."""
        pattern = self.records("*")
        for folder in pattern.parent.glob(pattern.name):
            if made_by_this_tool(folder):
                shutil.rmtree(folder, ignore_errors=True)


def remove(paths: list[Path]) -> None:
    for path in paths:
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
