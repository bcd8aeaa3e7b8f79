"""One run per dataset at a time: an OS file lock beside the dataset folder.

``flock`` is released by the kernel when its holder exits, a crash or SIGKILL included, so a lock can
never outlive its run. The lock file (``.NAME.lock`` beside ``NAME``) keeps the holder's description
for the message a second run prints.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from corpus_hygiene.publish.beside import Beside


class DatasetBusy(Exception):
    """Another run holds the dataset's lock."""


def lock_problem(dataset_dir: Path | str) -> str | None:
    """Why the lock path cannot be this tool's lock file (a folder, a link, a FIFO…), or None. A link is
    never followed: truncating the lock would empty whatever it points to."""
    path = Beside(dataset_dir).lock
    if path.is_symlink() or (path.exists() and not path.is_file()):
        return f"{path} is not a lock file this tool wrote; move it away (runs lock the dataset there)"
    return None


@contextmanager
def dataset_lock(dataset_dir: Path | str, holder: str, wait_seconds: float = 0.0) -> Iterator[None]:
    """Hold ``dataset_dir``'s lock for the block, waiting up to ``wait_seconds`` for another holder."""
    path = Beside(dataset_dir).lock
    if problem := lock_problem(dataset_dir):
        raise DatasetBusy(problem)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    other = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another run"
                    raise DatasetBusy(
                        f"{dataset_dir} is being written by {other}; waited {wait_seconds:g} s "
                        "(--wait SECONDS to wait longer)"
                    ) from None
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def wait_for_lock(dataset_dir: Path | str, wait_seconds: float = 0.0) -> None:
    """Return once no run holds ``dataset_dir``'s lock (waiting up to ``wait_seconds``), else raise
    DatasetBusy: the CLI says "busy" before Prefect starts, and the flow takes the lock for the run.
    Without a lock file nobody holds it (none is made here: the run makes it, and removes it if it fails)."""
    if not os.path.lexists(Beside(dataset_dir).lock):
        return
    with dataset_lock(dataset_dir, f"a run starting (pid {os.getpid()})", wait_seconds):
        pass
