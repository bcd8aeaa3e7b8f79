"""Files grouped for the per-file work: a task costs more than one small file's work, so files go in
batches of consecutive files that shrink towards the end, so that parallel workers finish together."""

from __future__ import annotations

from corpus_hygiene.models import SourceFile

MAX_BATCH_BYTES = 16 << 20  # at most: a batch's results are held by its worker until gathered
BATCH_FILES = 256
MIN_BATCH_BYTES = 1 << 20  # at least (unless fewer are left): enough work to outweigh a task's cost


def batches(
    files: list[SourceFile],
    workers: int = 1,
    max_bytes: int = MAX_BATCH_BYTES,
    max_files: int = BATCH_FILES,
    min_bytes: int = MIN_BATCH_BYTES,
) -> list[list[SourceFile]]:
    """Consecutive files in batches (guided scheduling): each takes 1/(2 × ``workers``) of the bytes
    still left, within ``min_bytes``..``max_bytes``, at most ``max_files`` files (a larger file alone).

    >>> from pathlib import Path
    >>> files = [SourceFile(str(i), Path(str(i)), 10) for i in range(12)]
    >>> [len(b) for b in batches(files, 2, max_bytes=40, min_bytes=20)]
    [3, 2, 2, 2, 2, 1]
    >>> [len(b) for b in batches(files, 1, max_bytes=40, min_bytes=20)]
    [4, 4, 2, 2]
    >>> [len(b) for b in batches(files, 2, max_bytes=40, max_files=2, min_bytes=20)]
    [2, 2, 2, 2, 2, 2]
    >>> big = [SourceFile("big", Path("big"), 500)]
    >>> [len(b) for b in batches(files[:2] + big + files[2:], 1, max_bytes=40, min_bytes=20)]
    [2, 1, 4, 3, 2, 1]
    """
    out: list[list[SourceFile]] = []
    left, i = sum(f.size for f in files), 0
    while i < len(files):
        target = min(max_bytes, max(min_bytes, left / (2 * workers)))
        batch, size = [files[i]], files[i].size
        i += 1
        while i < len(files) and len(batch) < max_files and size + files[i].size <= target:
            batch.append(files[i])
            size, i = size + files[i].size, i + 1
        out.append(batch)
        left -= size
    return out


def label(batch: list[SourceFile]) -> str:
    """How a batch is named in logs and task runs: its first file, and how many more."""
    return batch[0].rel_path + (f" and {len(batch) - 1} more" if len(batch) > 1 else "")
