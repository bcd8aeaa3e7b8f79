"""Exact duplicates and the canonical-record rule (which copy of a group is kept, and why)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import numpy as np

from corpus_hygiene.store.keys import Keys, RecordKey


@dataclass(frozen=True, slots=True)
class DuplicateOf:
    record: RecordKey
    canonical: RecordKey
    kind: str  # "exact" | "near"
    similarity: float
    reason: str  # why the canonical copy was kept rather than this one


@dataclass(frozen=True, slots=True)
class VerifiedPair:
    """A near-duplicate candidate pair whose similarity was verified: ``record`` against the earlier
    canonical ``candidate``; ``merged`` when it made ``record`` a duplicate of ``candidate``."""

    record: RecordKey
    candidate: RecordKey
    similarity: float
    merged: bool


@dataclass(frozen=True, eq=False)
class _Columns(Sequence):
    """Rows as numpy columns of equal length (``keys`` aside: records are indices into them), not an
    object each; ``[i]`` makes one's object (``_one``), ``take`` the rows at some indices."""

    keys: Keys

    def __len__(self) -> int:
        return len(getattr(self, fields(self)[1].name))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._one(j) for j in range(*i.indices(len(self)))]
        return self._one(range(len(self))[i])

    def take(self, indices: np.ndarray):
        return replace(self, **{f.name: getattr(self, f.name)[indices] for f in fields(self)[1:]})


@dataclass(frozen=True, eq=False)
class Duplicates(_Columns):
    """The duplicates: ``record`` is a duplicate of ``canonical``; ``near``, else exact; ``similarity``."""

    record: np.ndarray
    canonical: np.ndarray
    near: np.ndarray
    similarity: np.ndarray

    def _one(self, i: int) -> DuplicateOf:
        record, canonical = self.keys[self.record[i]], self.keys[self.canonical[i]]
        kind = "near" if self.near[i] else "exact"
        return DuplicateOf(record, canonical, kind, float(self.similarity[i]), why_kept(canonical, record))


@dataclass(frozen=True, eq=False)
class VerifiedPairs(_Columns):
    """The verified near-duplicate pairs: ``record`` against ``candidate``, ``similarity``, ``merged``."""

    record: np.ndarray
    candidate: np.ndarray
    similarity: np.ndarray
    merged: np.ndarray

    def _one(self, i: int) -> VerifiedPair:
        record, candidate = self.keys[self.record[i]], self.keys[self.candidate[i]]
        return VerifiedPair(record, candidate, float(self.similarity[i]), bool(self.merged[i]))


LENGTH_STEP = 1.02  # lengths are compared in 2% steps: a few edited characters are not "more complete"


def length_step(n: int) -> int:
    """The 2%-wide length class of a text (a fixed logarithmic grid): same class, equally complete.

    >>> length_step(1050) == length_step(1060), length_step(1050) < length_step(1100)
    (True, True)
    """
    return int(math.log(max(n, 1)) / math.log(LENGTH_STEP))


def why_kept(kept: RecordKey, dropped: RecordKey) -> str:
    if kept.n_fixes != dropped.n_fixes:
        return f"fewer repairs ({kept.n_fixes} vs {dropped.n_fixes})"
    if length_step(kept.n_chars) != length_step(dropped.n_chars):
        return f"more complete ({kept.n_chars} vs {dropped.n_chars} characters)"
    return f"earlier in the corpus ({kept.ref} before {dropped.ref})"


def rank_order(keys: Keys, at: np.ndarray | None = None) -> np.ndarray:
    """Indices that sort ``keys``, or ``keys[at]`` (then indices into ``at``), best canonical first: fewer
    repairs, then the more complete text (longer by a 2% step or more), then earliest provenance
    (source_file, source_line: the record identity, a stable tie-break). The 2% step keeps an edited copy
    from winning over its original by a few inserted characters, which would leave the original's other
    copies to be compared with the edited one."""
    at = slice(None) if at is None else at
    lengths, inverse = np.unique(keys.n_chars[at], return_inverse=True)
    steps = np.array([length_step(int(n)) for n in lengths], np.int32)[inverse]  # math.log, as length_step
    files = keys.files.ranks()[keys.source_file[at]]
    return np.lexsort((keys.source_line[at], files, -steps, keys.n_fixes[at]))


def exact_groups(keys: Keys, exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact duplicates (indices into ``keys``, all of their store's) and the canonical of each: the
    best-ranked record of its ``record_id``, the records ``exclude`` marks (a mask) left out. The ids are
    read from the store a part at a time (every copy of an id is in one part) and sorted; only repeated
    ones are ranked."""
    found, group, groups = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], 0
    for part, first in keys.store.id_parts():
        if exclude is not None:
            part = part[~exclude[part["pos"]]]
            first = np.r_[True, part["key"][1:] != part["key"][:-1]][: len(part)]
        repeated = ~first | np.r_[~first[1:], False]  # a run of equal ids longer than one
        found.append(part["pos"][repeated])
        group.append(groups + np.cumsum(first)[repeated])  # the ids' numbers, sorted
        groups += len(part) + 1
    members, group = np.concatenate(found), np.concatenate(group)
    del found
    if not len(members):
        return members, members
    rank = np.empty(len(members), np.int64)
    rank[rank_order(keys, members)] = np.arange(len(members))
    order = np.lexsort((rank, group))  # each group's members, best first
    members, group = members[order], group[order]
    first = np.r_[True, group[1:] != group[:-1]]
    best = members[np.flatnonzero(first)[np.cumsum(first) - 1]]
    return members[~first], best[~first]


LOOKUP_ROWS = 1 << 16


def lookup(
    sorted_keys: np.ndarray, values: np.ndarray, *columns: np.ndarray, rows: int = LOOKUP_ROWS
) -> tuple[np.ndarray, ...]:
    """Which ``values`` are in ``sorted_keys``, and ``columns`` (aligned with it) at each (0 where not).
    ``values`` are searched ``rows`` at a time: the search's temporaries stay that size."""
    found, out = np.zeros(len(values), bool), [np.zeros(len(values), c.dtype) for c in columns]
    for lo in range(0, len(values) if len(sorted_keys) else 0, rows):
        part = values[lo : lo + rows]
        at = np.minimum(np.searchsorted(sorted_keys, part), len(sorted_keys) - 1)
        found[lo : lo + len(part)] = hit = sorted_keys[at] == part
        for column, into in zip(columns, out, strict=True):
            into[lo : lo + len(part)] = np.where(hit, column[at], 0)
    return found, *out
