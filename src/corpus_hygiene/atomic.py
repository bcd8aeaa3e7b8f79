"""Files replaced whole: written beside their final name, then renamed into place; and the JSON documents
written so (metrics, manifest)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

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


def json_document(obj) -> bytes:
    """``obj`` as an indented JSON file, keys sorted, UTF-8: for str keys, the bytes of ``json.dumps(indent=2,
    sort_keys=True, ensure_ascii=False)`` + a newline. orjson, as the stdlib's indented encoder gathers
    every token of a file that lists each input (metrics, manifest) in a list before joining them."""
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
