"""What the near-duplicate step of one run leaves to the next, so that a re-run after 1% new files
does ~1% of the pair work:

- the **candidate pairs**, with the set of texts LSH indexed: whether two texts are a candidate pair
  is a pure function of the two texts and the config, so among texts the previous run indexed the
  candidates are the previous run's, and only pairs with a text it did not index are searched for
  (``lsh.fresh_candidate_pairs``). This is what grows faster than the corpus: Chinese and
  Japanese abstracts share most of their characters, and their LSH bands collide by the million
  for a few thousand candidates (docs/design.md);
- the **verified similarities**, so that a re-run verifies only the pairs it has not seen.

Both are exact: the dedup result is the same with or without the memo (tested). Stored with the
per-file cache (numpy ``.npz``, loaded without pickle, with a digest of its arrays checked on load),
under a name made of the code fingerprint and the config's: a code or config change starts from an
empty memo, and so does a memo that cannot be read or does not match its digest (``PairMemo.problem``).
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np

from corpus_hygiene.atomic import write_atomic
from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.runinfo import code_fingerprint

Key = tuple[bytes, bytes]


TEXT_KEY_BYTES = 16


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=TEXT_KEY_BYTES).digest()


INDEX_KEY_BYTES = 17


# index keys as numpy values of 17 raw bytes ("V17": compared, sorted and listed as whole bytes; "S17"
# would drop a trailing NUL byte when listed), so that a million of them are one array, not a million
# bytes objects
INDEX_KEY = np.dtype(f"V{INDEX_KEY_BYTES}")


def index_keys(keys: np.ndarray, cjk: np.ndarray) -> np.ndarray:
    """Each text's key (a row of ``keys``, (n, 16) uint8) and what its candidate test depends on besides
    its signature: whether it is CJK (its estimate floor), which comes from the record's language, detected
    on the raw text, so the same clean text can come with either flag. As ``INDEX_KEY`` values: 17 bytes,
    no second hash of the text."""
    rows = np.empty((len(keys), INDEX_KEY_BYTES), np.uint8)
    rows[:, :TEXT_KEY_BYTES], rows[:, TEXT_KEY_BYTES] = keys, cjk
    return rows.view(INDEX_KEY).ravel()


def _as_index_keys(rows: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(rows, np.uint8).reshape(-1, INDEX_KEY_BYTES).view(INDEX_KEY).ravel()


class PairMemo:
    """``known``: what earlier runs verified; ``used``: what this run verified or looked up (what the
    next run may need, and all that is saved: pairs of removed records do not pile up).

    ``indexed`` / ``candidates``: the texts (``INDEX_KEY`` values) the previous run's LSH indexed and
    all its candidate pairs among them ((m, 2)); empty: no previous run, every pair is searched for.
    ``record_candidates`` keeps this run's, which are what is saved."""

    def __init__(
        self,
        known: dict[Key, float] | None = None,
        indexed: np.ndarray | None = None,
        candidates: np.ndarray | None = None,
    ) -> None:
        self.known = known or {}
        self.used: dict[Key, float] = {}
        self.hits = 0
        self.indexed = np.empty(0, INDEX_KEY) if indexed is None else np.sort(indexed)  # binary-searched
        self.candidates = np.empty((0, 2), INDEX_KEY) if candidates is None else candidates
        self.next_indexed = np.empty(0, INDEX_KEY)
        self.next_candidates = np.empty((0, 2), INDEX_KEY)
        self.problem: str | None = None  # why the stored memo was not used (damaged), for the run's log

    def record_candidates(self, indexed: np.ndarray, candidates: np.ndarray) -> None:
        self.next_indexed, self.next_candidates = indexed, candidates

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


_ARRAYS = ("a", "b", "sim", "indexed", "ca", "cb")


def _digest(arrays: dict[str, np.ndarray]) -> np.ndarray:
    digest = hashlib.blake2b(digest_size=16)
    for name in _ARRAYS:
        digest.update(name.encode() + np.ascontiguousarray(arrays[name]).tobytes())
    return np.frombuffer(digest.digest(), dtype=np.uint8)


def load_memo(path: Path) -> PairMemo:
    """The memo stored at ``path``; an empty one when it is absent, and an empty one with ``problem``
    set when it cannot be read or its arrays do not match their digest (anything goes wrong: the memo
    is disposable, and recomputing it is always correct)."""
    if not path.exists():
        return PairMemo()
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in _ARRAYS}
            if not np.array_equal(data["digest"], _digest(arrays)):
                raise ValueError("its arrays do not match their digest")
        a, b, sim, indexed, ca, cb = (arrays[name] for name in _ARRAYS)
        return PairMemo(
            {(x.tobytes(), y.tobytes()): float(s) for x, y, s in zip(a, b, sim, strict=True)},
            _as_index_keys(indexed),
            np.stack([_as_index_keys(ca), _as_index_keys(cb)], axis=1),
        )
    except Exception as exc:  # noqa: BLE001 - any damage means "recompute"
        memo = PairMemo()
        memo.problem = f"pair memo {path.name} unreadable ({type(exc).__name__}: {exc}): recomputed"
        return memo


def _key_array(keys) -> np.ndarray:
    """Text keys as an (n, 16) uint8 array (not ``S16``: numpy strips trailing NUL bytes of those)."""
    return np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, TEXT_KEY_BYTES)


def _rows(index_keys: np.ndarray) -> np.ndarray:
    """``INDEX_KEY`` values as an (n, 17) uint8 array, as stored."""
    return np.ascontiguousarray(index_keys).view(np.uint8).reshape(-1, INDEX_KEY_BYTES)


def save_memo(path: Path, memo: PairMemo) -> str | None:
    """Write the pairs this run used (written aside, renamed into place) and remove older memos.
    Returns why it could not be written (a full or read-only disk: the next run recomputes), or None."""
    keys = sorted(memo.used)
    pairs = np.ascontiguousarray(memo.next_candidates)
    pairs = pairs[np.argsort(pairs.view(f"V{2 * INDEX_KEY_BYTES}").ravel(), kind="stable")]  # by both keys
    arrays = {
        "a": _key_array(k[0] for k in keys),
        "b": _key_array(k[1] for k in keys),
        "sim": np.array([memo.used[k] for k in keys], dtype=np.float64),
        "indexed": _rows(np.sort(memo.next_indexed)),
        "ca": _rows(pairs[:, 0]),
        "cb": _rows(pairs[:, 1]),
    }
    packed = io.BytesIO()
    np.savez(packed, digest=_digest(arrays), **arrays)
    try:
        write_atomic(path, packed.getvalue())
        for old in path.parent.glob("verified-*.npz"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as exc:
        return f"pair memo not saved ({exc.strerror or exc}): the next run recomputes it"
    return None
