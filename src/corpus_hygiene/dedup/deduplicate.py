"""The whole dedup step: exact groups on the dedup key, then verified near duplicates among their
canonical records."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.exact import Duplicates, VerifiedPairs, exact_groups, lookup, rank_order
from corpus_hygiene.dedup.near import PairSearch, find_near_duplicates
from corpus_hygiene.incremental.pair_memo import PairMemo
from corpus_hygiene.language.scripts import CJK_LANGS
from corpus_hygiene.models import Record
from corpus_hygiene.store.keys import Keys
from corpus_hygiene.store.records import keys_of


def cjk_flags(keys: Keys) -> np.ndarray:
    """Whether each record is Chinese, Japanese or Korean, from its language."""
    return np.isin(keys.lang, [i for i, lang in enumerate(keys.langs.values) if lang in CJK_LANGS])


def deduplicate(
    records: Keys | Sequence[Record],
    config: DedupConfig,
    memo: PairMemo | None = None,
    search: PairSearch | None = None,
    fetch: Callable[[str, np.ndarray], Sequence] | None = None,
    exclude: np.ndarray | None = None,
) -> tuple[Keys, Duplicates, VerifiedPairs]:
    """Exact groups on the dedup key, then verified near duplicates among their canonicals (with
    ``memo``, similarities verified by an earlier run are looked up, not computed again); ``search``,
    where given, finds the near-duplicate candidates elsewhere (``near.PairSearch``).

    ``records``: Records, or the ``Keys`` of staged ones, with ``fetch(name, positions)`` giving their
    ``text``, ``signature`` and ``text_key`` (``RecordStore.column`` reads them from the store). Returns
    the kept records' keys, in canonical-rank order; the duplicates; every near-duplicate pair verified,
    merged or not (the duplicate audit's). ``exclude`` (a mask over the records) marks records placed
    elsewhere (a reference's copies): neither kept nor duplicates here."""
    if not isinstance(records, Keys):
        keys = keys_of(records)
        fetch = fetch or (lambda name, positions: [getattr(records[i], name) for i in positions.tolist()])
    else:
        keys = records
    exact, exact_of = exact_groups(keys, exclude)
    canonical = np.ones(len(keys), dtype=bool) if exclude is None else ~exclude
    canonical[exact] = False
    canon = np.flatnonzero(canonical)
    canon = canon[rank_order(keys, canon)]  # indices into keys, in canonical-rank order
    del canonical
    positions = keys.positions(canon)
    cjk = cjk_flags(keys)[canon]
    verified: list[tuple[int, int, float]] = []
    found = find_near_duplicates(
        fetch("text", positions),
        config,
        fetch("signature", positions),
        cjk,
        memo,
        fetch("text_key", positions),
        verified,
        search,
    )
    near = canon[np.array([m.index for m in found], np.int64)]
    order = np.argsort(near)
    near, near_sim = near[order], np.array([m.similarity for m in found], np.float64)[order]
    near_of = canon[np.array([m.canonical for m in found], np.int64)][order]
    pair = np.array(verified, np.float64).reshape(-1, 3)
    record, candidate = canon[pair[:, 0].astype(np.int64)], canon[pair[:, 1].astype(np.int64)]
    merged, merged_into = lookup(near, record, near_of)
    pairs = VerifiedPairs(keys, record, candidate, pair[:, 2], merged & (merged_into == candidate))
    # an exact copy of a record that turned out to be a near duplicate follows it to the canonical
    follows, follows_to, follows_sim = lookup(near, exact_of, near_of, near_sim)
    exact_of = np.where(follows, follows_to, exact_of)
    similarity = np.where(follows, follows_sim, 1.0)
    dups = Duplicates(
        keys,
        np.concatenate([exact, near]),
        np.concatenate([exact_of, near_of]),
        np.concatenate([follows, np.ones(len(near), bool)]),
        np.concatenate([similarity, near_sim]),
    )
    kept = np.ones(len(canon), dtype=bool)
    kept[np.isin(canon, near)] = False
    return keys.take(canon[kept]), dups, pairs
