"""Exact duplicates, the canonical-record rule, and the whole dedup step (exact, then near)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.incremental.pair_memo import PairMemo
from corpus_hygiene.models import Record

if TYPE_CHECKING:
    from corpus_hygiene.dedup.near import PairSearch


@dataclass(frozen=True, slots=True)
class DuplicateOf:
    record: Record
    canonical: Record
    kind: str  # "exact" | "near"
    similarity: float
    reason: str  # why the canonical copy was kept rather than this one


@dataclass(frozen=True, slots=True)
class VerifiedPair:
    """A near-duplicate candidate pair whose similarity was verified: ``record`` against the earlier
    canonical ``candidate``; ``merged`` when it made ``record`` a duplicate of ``candidate``."""

    record: Record
    candidate: Record
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


def canonical_rank(record: Record) -> tuple:
    """Smaller is better: fewer repairs, then the more complete text (longer by a 2% step or more),
    then earliest provenance (source_file, source_line: the record identity, a stable tie-break).

    The 2% step keeps an edited copy from winning over its original by a few inserted characters,
    which would leave the original's other copies to be compared with the edited one.
    """
    return (record.n_fixes, -length_step(record.n_chars), record.source_file, record.source_line)


def why_kept(kept: Record, dropped: Record) -> str:
    if kept.n_fixes != dropped.n_fixes:
        return f"fewer repairs ({kept.n_fixes} vs {dropped.n_fixes})"
    if length_step(kept.n_chars) != length_step(dropped.n_chars):
        return f"more complete ({kept.n_chars} vs {dropped.n_chars} characters)"
    return f"earlier in the corpus ({kept.ref} before {dropped.ref})"


def _attributes(name: str, records: list) -> list:
    return [getattr(r, name) for r in records]


def deduplicate(
    records: Sequence[Record],
    config: DedupConfig,
    memo: PairMemo | None = None,
    pairs: list[VerifiedPair] | None = None,
    search: PairSearch | None = None,
    fetch: Callable[[str, list], Sequence] = _attributes,
) -> tuple[list[Record], list[DuplicateOf]]:
    """Exact groups on the dedup key, then verified near duplicates among their canonicals (with
    ``memo``, similarities verified by an earlier run are looked up, not computed again). ``pairs``,
    where given, receives every near-duplicate pair verified, merged or not (the duplicate audit's);
    ``search``, where given, finds the near-duplicate candidates elsewhere (``near.PairSearch``).

    ``records`` are Records or any objects with the fields ``canonical_rank`` and ``why_kept`` read
    (``staging.RecordKey``); ``fetch(name, records)`` gives their ``text``, ``signature`` and
    ``text_key`` (``RecordStore.column`` reads them from the store)."""
    from corpus_hygiene.dedup.near import find_near_duplicates

    first: dict[str, Record] = {}  # each id's first record; a list only for ids with copies
    copies: dict[str, list[Record]] = {}
    for rec in records:
        if (earlier := first.setdefault(rec.record_id, rec)) is not rec:
            copies.setdefault(rec.record_id, [earlier]).append(rec)
    dups: list[DuplicateOf] = []
    canon: list[Record] = []
    for record_id, best in first.items():
        if (members := copies.get(record_id)) is not None:
            best = min(members, key=canonical_rank)
            dups += [DuplicateOf(m, best, "exact", 1.0, why_kept(best, m)) for m in members if m is not best]
        canon.append(best)
    canon.sort(key=canonical_rank)
    verified: list[tuple[int, int, float]] | None = [] if pairs is not None else None
    merged_into: dict[int, tuple[int, float]] = {
        m.index: (m.canonical, m.similarity)
        for m in find_near_duplicates(
            fetch("text", canon),
            config,
            fetch("signature", canon),
            [r.lang in CJK_LANGS for r in canon],
            memo,
            fetch("text_key", canon),
            verified,
            search,
        )
    }
    if pairs is not None:
        pairs += [
            VerifiedPair(canon[i], canon[j], sim, merged_into.get(i, (None,))[0] == j)
            for i, j, sim in verified
        ]
    kept: list[Record] = []
    for i, rec in enumerate(canon):
        if i in merged_into:
            j, sim = merged_into[i]
            dups.append(DuplicateOf(rec, canon[j], "near", sim, why_kept(canon[j], rec)))
        else:
            kept.append(rec)
    # an exact copy of a record that turned out to be a near duplicate follows it to the canonical
    final = {id(d.record): d for d in dups if d.kind == "near"}
    dups = [
        DuplicateOf(
            d.record,
            final[id(d.canonical)].canonical,
            "near",
            final[id(d.canonical)].similarity,
            why_kept(final[id(d.canonical)].canonical, d.record),
        )
        if d.kind == "exact" and id(d.canonical) in final
        else d
        for d in dups
    ]
    return kept, dups
