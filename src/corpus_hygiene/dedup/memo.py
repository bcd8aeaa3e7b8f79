"""Verified similarities kept from one run to the next, so a re-run verifies only the pairs it has not
seen: after 1% new files, nearly every candidate pair is one the previous run verified already.

A verified similarity is a pure function of the two texts and the dedup config, so a remembered value
is exactly the value a fresh verification gives, and the dedup result is the same with or without the
memo (tested). Stored with the per-file cache (numpy ``.npz``, loaded without pickle), under a name
made of the code fingerprint and the config's: a code or config change starts from an empty memo.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.runinfo import code_fingerprint

Key = tuple[bytes, bytes]


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class PairMemo:
    """``known``: what earlier runs verified; ``used``: what this run verified or looked up (what the
    next run may need, and all that is saved: pairs of removed records do not pile up)."""

    def __init__(self, known: dict[Key, float] | None = None) -> None:
        self.known = known or {}
        self.used: dict[Key, float] = {}
        self.hits = 0

    def get(self, key: Key) -> float | None:
        value = self.known.get(key)
        if value is not None:
            self.hits += 1
            self.used[key] = value
        return value

    def put(self, key: Key, value: float) -> None:
        self.used[key] = value


def memo_path(cache_dir: Path | str, config: DedupConfig) -> Path:
    name = hashlib.sha256(f"{code_fingerprint()} {config.fingerprint()}".encode()).hexdigest()[:24]
    return Path(cache_dir) / f"verified-{name}.npz"


def load_memo(path: Path) -> PairMemo:
    """The memo stored at ``path``; an empty one when it is absent or unreadable."""
    try:
        with np.load(path, allow_pickle=False) as data:
            a, b, sim = data["a"], data["b"], data["sim"]
    except (OSError, ValueError, KeyError):
        return PairMemo()
    return PairMemo({(x.tobytes(), y.tobytes()): float(s) for x, y, s in zip(a, b, sim, strict=True)})


def save_memo(path: Path, memo: PairMemo) -> None:
    """Write the pairs this run used (written aside, renamed into place) and remove older memos."""
    keys = sorted(memo.used)
    a = np.array([k[0] for k in keys], dtype="S16").view(np.uint8).reshape(-1, 16)
    b = np.array([k[1] for k in keys], dtype="S16").view(np.uint8).reshape(-1, 16)
    sim = np.array([memo.used[k] for k in keys], dtype=np.float64)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.npz")
    np.savez(tmp, a=a, b=b, sim=sim)
    os.replace(tmp, path)
    for old in path.parent.glob("verified-*.npz"):
        if old != path:
            old.unlink(missing_ok=True)
