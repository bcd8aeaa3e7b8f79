"""Files replaced whole: written beside their final name, then renamed into place."""

from __future__ import annotations

import os
from pathlib import Path

TMP = ".tmp"


def write_atomic(path: Path, data: bytes | str) -> None:
    """A reader sees the old file or the new, never half of one; a failed write (full or read-only disk)
    leaves the old file and no temporary one."""
    tmp = path.with_name(f"{path.name}{TMP}{os.getpid()}")
    try:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
