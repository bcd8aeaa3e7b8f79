"""Exact duplicates, the canonical-record rule, and the whole dedup step (exact, then near)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow.compute as pc

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.incremental.pair_memo import PairMemo
from corpus_hygiene.models import Record
from corpus_hygiene.pipeline.staging import Keys, RecordKey

if TYPE_CHECKING:
    from corpus_hygiene.dedup.near import PairSearch


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


CJK_LANGS = frozenset({"zh", "ja", "ko"})
LENGTH_STEP = 1.02  # lengths are compared in 2% steps: a few edited characters are not "more complete"


def length_step(n: int) -> int:
    """The 2%-wide length class of a text (a fixed logarithmic grid): same class, equally complete.

    >>> length_step(1050) == length_step(1060), length_step(1050) < length_step(1100)
    (True, True)
    """
    return int(math.log(max(n, 1)) / math.log(LENGTH_STEP))


def canonical_rank(record: RecordKey) -> tuple:
    """Smaller is better: fewer repairs, then the more complete text (longer by a 2% step or more),
    then earliest provenance (source_file, source_line: the record identity, a stable tie-break).

    The 2% step keeps an edited copy from winning over its original by a few inserted characters,
    which would leave the original's other copies to be compared with the edited one.
    """
    return (record.n_fixes, -length_step(record.n_chars), record.source_file, record.source_line)


def why_kept(kept: RecordKey, dropped: RecordKey) -> str:
    if kept.n_fixes != dropped.n_fixes:
        return f"fewer repairs ({kept.n_fixes} vs {dropped.n_fixes})"
    if length_step(kept.n_chars) != length_step(dropped.n_chars):
        return f"more complete ({kept.n_chars} vs {dropped.n_chars} characters)"
    return f"earlier in the corpus ({kept.ref} before {dropped.ref})"


def rank_order(keys: Keys) -> np.ndarray:
    """Indices that sort ``keys`` by ``canonical_rank`` (the same order, computed on the columns)."""
    lengths, at = np.unique(keys.n_chars, return_inverse=True)
    steps = np.array([length_step(int(n)) for n in lengths], np.int64)[at]  # math.log, as length_step
    return np.lexsort((keys.source_line, keys.files.ranks()[keys.source_file], -steps, keys.n_fixes))


def deduplicate(
    records: Keys | Sequence[Record],
    config: DedupConfig,
    memo: PairMemo | None = None,
    pairs: list[VerifiedPair] | None = None,
    search: PairSearch | None = None,
    fetch: Callable[[str, np.ndarray], Sequence] | None = None,
) -> tuple[Keys, list[DuplicateOf]]:
    """Exact groups on the dedup key, then verified near duplicates among their canonicals (with
    ``memo``, similarities verified by an earlier run are looked up, not computed again). ``pairs``,
    where given, receives every near-duplicate pair verified, merged or not (the duplicate audit's);
    ``search``, where given, finds the near-duplicate candidates elsewhere (``near.PairSearch``).

    ``records``: Records, or the ``Keys`` of staged ones, with ``fetch(name, positions)`` giving their
    ``text``, ``signature`` and ``text_key`` (``RecordStore.column`` reads them from the store). The
    kept records come back as keys, in canonical-rank order; the duplicates' records as ``RecordKey``s."""
    from corpus_hygiene.dedup.near import find_near_duplicates

    if not isinstance(records, Keys):
        keys = Keys.of(records)
        fetch = fetch or (lambda name, positions: [getattr(records[i], name) for i in positions.tolist()])
    else:
        keys = records
    # exact groups: only records whose id is not unique are looked at one by one
    counts = pc.value_counts(keys.record_id)
    repeated = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
    in_groups = np.flatnonzero(pc.is_in(keys.record_id, value_set=repeated).to_numpy(zero_copy_only=False))
    groups: dict[str, list[tuple[RecordKey, int]]] = {}
    for i in in_groups.tolist():
        key = keys[i]
        groups.setdefault(key.record_id, []).append((key, i))
    dups: list[DuplicateOf] = []
    canonical = np.ones(len(keys), dtype=bool)
    for members in groups.values():
        best = min((m for m, _ in members), key=canonical_rank)
        dups += [DuplicateOf(m, best, "exact", 1.0, why_kept(best, m)) for m, _ in members if m is not best]
        canonical[[i for m, i in members if m is not best]] = False
    canon = keys.take(np.flatnonzero(canonical))
    canon = canon.take(rank_order(canon))
    cjk = np.isin(canon.lang, [i for i, lang in enumerate(keys.langs.values) if lang in CJK_LANGS])
    verified: list[tuple[int, int, float]] | None = [] if pairs is not None else None
    merged_into: dict[int, tuple[int, float]] = {
        m.index: (m.canonical, m.similarity)
        for m in find_near_duplicates(
            fetch("text", canon.pos),
            config,
            fetch("signature", canon.pos),
            cjk,
            memo,
            fetch("text_key", canon.pos),
            verified,
            search,
        )
    }
    if pairs is not None:
        pairs += [
            VerifiedPair(canon[i], canon[j], sim, merged_into.get(i, (None,))[0] == j)
            for i, j, sim in verified
        ]
    near = [
        DuplicateOf(canon[i], canon[j], "near", sim, why_kept(canon[j], canon[i]))
        for i, (j, sim) in sorted(merged_into.items())
    ]
    kept = np.ones(len(canon), dtype=bool)
    kept[list(merged_into)] = False
    # an exact copy of a record that turned out to be a near duplicate follows it to the canonical
    final = {d.record.pos: d for d in near}
    dups = [
        DuplicateOf(
            d.record,
            final[d.canonical.pos].canonical,
            "near",
            final[d.canonical.pos].similarity,
            why_kept(final[d.canonical.pos].canonical, d.record),
        )
        if d.canonical.pos in final
        else d
        for d in dups
    ]
    return canon.take(np.flatnonzero(kept)), dups + near
