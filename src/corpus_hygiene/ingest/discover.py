"""Find the input files under a root folder, safely.

Rules (each one a test in tests/test_discover.py):
- every regular file under the root, recursively, sorted by its relative path (code-point order of
  the "/"-joined path, so the order does not depend on the filesystem or the platform);
- symlinks are never followed. One that resolves inside the root is redundant (its target is read
  through its real path) and is listed as skipped; one that resolves outside the root, loops, or
  dangles becomes a file-level quarantine row;
- FIFOs, sockets and devices are refused without being opened (opening a FIFO would hang);
- files larger than ``max_bytes`` are refused as ``oversized_file``; empty files as ``empty_file``;
- a name is any bytes the filesystem allows: a byte that is not UTF-8 is written ``\\xNN`` and a
  backslash ``\\\\`` in the relative path (``safe_path``), which every table and JSON file can hold
  and which gives two different names two different paths;
- the run's outputs never lie under the root: the CLI and the flow refuse folders that overlap
  (``publish/owner.py``'s ``overlap_problem``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from corpus_hygiene.models import Rejected, SourceFile
from corpus_hygiene.reasons import Reason


@dataclass(slots=True)
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    refused: list[Rejected] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # symlinks that point back inside the root


class InputRootError(Exception):
    """The input folder itself cannot be used (missing, not a folder)."""


def _refuse(rel: str, reason: Reason, detail: str) -> Rejected:
    return Rejected(source_file=rel, source_line=None, reason=reason.value, detail=safe_path(detail))


def _classify_symlink(path: Path, root: Path, rel: str) -> Rejected | None:
    """None when the link points back inside the root (nothing is lost by skipping it)."""
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        return _refuse(rel, Reason.BROKEN_SYMLINK, f"symlink to {os.readlink(path)!r}, which does not exist")
    except (RuntimeError, OSError) as exc:  # RuntimeError on 3.11-3.12, OSError(ELOOP) on 3.13+
        if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == 40:
            return _refuse(rel, Reason.SYMLINK_LOOP, "symlink loop: the link resolves to itself")
        return _refuse(rel, Reason.UNREADABLE_FILE, f"symlink could not be resolved: {exc}")
    if target == root or root in target.parents:
        return None
    return _refuse(
        rel,
        Reason.SYMLINK_OUTSIDE_ROOT,
        f"symlink to {target}, outside the input folder; not read (copy the file in to include it)",
    )


def safe_path(rel: str) -> str:
    """``rel`` (as ``os.walk`` gives it: undecodable bytes as surrogates) with each byte that is not UTF-8
    written ``\\xNN`` and each backslash doubled: printable, encodable, the bytes recoverable from it,
    and a name spelt with a literal ``\\xNN`` never taken for one with that byte.

    >>> safe_path(os.fsdecode(b"caf\\xe9/\\xe8\\xae\\xba.txt")), safe_path("caf\\\\xe9")
    ('caf\\\\xe9/论.txt', 'caf\\\\\\\\xe9')
    """
    return os.fsencode(rel).replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")


def discover(root: Path | str, max_bytes: int) -> Discovery:
    root_path = Path(root)
    if not root_path.exists():
        raise InputRootError(f"input folder {str(root)!r} does not exist")
    root_path = root_path.resolve()
    if not root_path.is_dir():
        raise InputRootError(f"input {str(root)!r} is not a folder; pass the folder that holds the files")

    out = Discovery()
    entries: list[tuple[str, Path]] = []

    def unreadable_folder(exc: OSError) -> None:
        rel = safe_path(Path(exc.filename).relative_to(root_path).as_posix()) if exc.filename else "."
        out.refused.append(_refuse(rel, Reason.UNREADABLE_FILE, f"cannot list the folder: {exc.strerror}"))

    # os.walk with followlinks=False never descends into a symlinked folder, so it cannot loop.
    for dirpath, dirnames, filenames in os.walk(root_path, followlinks=False, onerror=unreadable_folder):
        base = Path(dirpath)
        for name in dirnames + filenames:
            path = base / name
            if name in dirnames and not path.is_symlink():
                continue  # a real folder: walked into
            entries.append((safe_path(path.relative_to(root_path).as_posix()), path))

    for rel, path in sorted(entries, key=lambda e: e[0]):
        try:
            st = path.lstat()
        except OSError as exc:
            out.refused.append(_refuse(rel, Reason.UNREADABLE_FILE, f"cannot stat the file: {exc.strerror}"))
            continue
        if stat.S_ISLNK(st.st_mode):
            refusal = _classify_symlink(path, root_path, rel)
            if refusal is None:
                out.skipped.append(rel)
            else:
                out.refused.append(refusal)
            continue
        if not stat.S_ISREG(st.st_mode):
            out.refused.append(
                _refuse(
                    rel, Reason.NOT_REGULAR_FILE, "not a regular file (FIFO, socket or device); not opened"
                )
            )
            continue
        if st.st_size > max_bytes:
            out.refused.append(
                _refuse(
                    rel,
                    Reason.OVERSIZED_FILE,
                    f"file is {st.st_size:,} bytes, over the limit of {max_bytes:,} "
                    "(raise it with --max-file-mb)",
                )
            )
            continue
        out.files.append(SourceFile(rel_path=rel, abs_path=path, size=st.st_size, mtime_ns=st.st_mtime_ns))
    return out


class LeftTheRoot(OSError):
    """The path of a discovered file now leads outside the input folder: a folder on it (or the file)
    was swapped for a symlink after discovery."""


@contextmanager
def open_source(source: SourceFile) -> Iterator[int]:
    """Open a discovered file only where it was discovered, whatever was swapped since.

    O_NOFOLLOW refuses a path that became a link; O_NONBLOCK keeps a path that became a FIFO from
    blocking the open; the opened descriptor's own path (``/proc/self/fd``, where the system has it) must
    be the discovered one, so a folder on the way swapped for a link out of the root is refused
    (``LeftTheRoot``), never read. Yields the file descriptor of a regular file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(source.abs_path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{source.rel_path} is no longer a regular file")
        try:
            opened = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # no /proc: O_NOFOLLOW guards the file's own name only
            opened = str(source.abs_path)
        if opened != str(source.abs_path):
            raise LeftTheRoot(f"its path now leads outside the input folder (to {opened!r}): not read")
        yield fd
    finally:
        os.close(fd)


def read_bytes(source: SourceFile, max_bytes: int) -> bytes:
    """The whole file (``open_source``); the size limit is enforced again on the bytes actually read."""
    with open_source(source) as fd:
        chunks = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > max_bytes:
                raise OSError(f"{source.rel_path} grew past the size limit while being read")
            chunks.append(chunk)
        return b"".join(chunks)
