"""Near duplicates: MinHash LSH proposes candidates, a verified similarity decides, and clusters are
stars around a canonical record, so nothing is merged by a chain of resemblances.

Verified similarity of two texts = the larger of the exact Jaccard of their verification shingle sets
(word or character bigrams), which forgives reordered sentences, and their token alignment ratio
(``difflib.SequenceMatcher`` on word tokens, or on characters for Chinese/Japanese), which forgives
scattered word edits that break many shingles at once. It is a property of the pair: the threshold
decides what it merges, never what it is (``pairs.parquet``'s what-if holds at every threshold).
A pair that shares only its opening sentences scores low on both (≤ 0.66 on the dev set, where true
near duplicates with up to 25% edits score ≥ 0.82), which is what a shingle threshold alone cannot do.

Records are visited best first (``exact.rank_order``). Each is compared with the canonical records
already chosen that LSH proposes; if the best verified similarity reaches the threshold it becomes a
duplicate of that canonical, otherwise a canonical itself. So every duplicate is verified against the
very record it is merged into: with A~B, B~C and A≁C, C is never pulled into A's cluster through B.
Only canonicals enter the LSH index. On a cluster, the candidates and their similarities come from
``dedup/cluster_search.py`` (a ``PairSearch``); the star pass (``star_pass``) is this module's either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.exact import lookup
from corpus_hygiene.dedup.lsh import candidate_pairs, cjk_mask, fresh_candidate_pairs
from corpus_hygiene.dedup.signatures import signature_matrix, signature_slices, take_rows
from corpus_hygiene.dedup.similarity import verified_similarity, verify_shingles
from corpus_hygiene.incremental.pair_memo import TEXT_KEY_BYTES, PairMemo, index_keys, text_key


@dataclass(frozen=True, slots=True)
class NearMatch:
    index: int  # the duplicate (position in the input sequence)
    canonical: int  # the record it was merged into
    similarity: float  # the verified similarity


def _pair_key(keys: np.ndarray, i: int, j: int) -> tuple[bytes, bytes]:
    """The memo's key of a pair: its texts' keys in order (the similarity is symmetric)."""
    a, b = keys[i].tobytes(), keys[j].tobytes()
    return (a, b) if a <= b else (b, a)


KEY_ROWS = 65_536  # text keys read at a time


def _key_rows(texts: Sequence[str], text_keys: Sequence[bytes]) -> np.ndarray:
    """The texts' memo keys (``text_key``) as an (n, 16) array, read ``KEY_ROWS`` at a time (they may
    be read from disk); one missing (a record made without one) is computed."""
    n = len(texts)
    rows = np.empty((n, TEXT_KEY_BYTES), np.uint8)
    for lo in range(0, n, KEY_ROWS):
        hi = min(n, lo + KEY_ROWS)
        given = list(text_keys[lo:hi])
        given += [b""] * (hi - lo - len(given))
        keys = (k if len(k) == TEXT_KEY_BYTES else text_key(texts[lo + i]) for i, k in enumerate(given))
        rows[lo:hi] = np.frombuffer(b"".join(keys), np.uint8).reshape(-1, TEXT_KEY_BYTES)
    return rows


def _pairs(codes: np.ndarray, n: int):
    """The (later, earlier) record indices of pair codes, as Python ints."""
    return zip((codes // n).tolist(), (codes % n).tolist(), strict=True)


def _texts_of_pairs(texts: Sequence[str], codes: np.ndarray, n: int) -> dict[int, str]:
    """The texts the candidate pairs ``codes`` need, by index, read at once: ``texts`` may be read from
    disk (``store.records.StagedColumn.take``), where a text at a time would open a file each."""
    if not len(codes):
        return {}
    wanted = np.unique(np.concatenate([codes // n, codes % n]))
    return dict(zip(wanted.tolist(), take_rows(texts, wanted), strict=True))


def _similarity(
    texts: Sequence[str] | dict[int, str],
    i: int,
    j: int,
    config: DedupConfig,
    memo: PairMemo | None,
    keys: np.ndarray,
) -> float:
    """Pair (i, j)'s similarity: from the memo, else computed now (and memoised)."""
    if memo is None:
        return verified_similarity(texts[i], texts[j], config)
    key = _pair_key(keys, i, j)
    sim = memo.get(key)
    if sim is None:
        sim = verified_similarity(texts[i], texts[j], config)
        memo.put(key, sim)
    return sim


def _record_candidates(memo: PairMemo, ids: np.ndarray, codes: np.ndarray) -> None:
    n = len(ids)
    memo.record_candidates(ids, np.stack([ids[codes // n], ids[codes % n]], axis=1))


def _positions(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The index in ``ids`` of each of ``wanted`` (any shape), or -1 where it is not there."""
    order = np.argsort(ids, kind="stable")
    found, at = lookup(ids[order], wanted.ravel(), order)
    return np.where(found, at, -1).reshape(wanted.shape)


def _candidates_with_memo(
    texts: Sequence[str],
    signatures: Sequence[bytes],
    config: DedupConfig,
    cjk: np.ndarray,
    ids: np.ndarray,
    memo: PairMemo,
) -> np.ndarray:
    """The candidate pairs of a re-run: the previous run's among the texts it indexed, and a search
    (``fresh_candidate_pairs``) for the pairs with a text it did not (``incremental/pair_memo.py`` says
    why that is exact). ``ids``: the texts' ``index_keys``."""
    n = len(ids)
    fresh = ~lookup(memo.indexed, ids)[0]
    where = np.flatnonzero(fresh)
    fresh_rows = signature_matrix(take_rows(texts, where), config, take_rows(signatures, where))
    new = fresh_candidate_pairs(signature_slices(texts, config, signatures), fresh, fresh_rows, config, cjk)
    i, j = _positions(ids, memo.candidates).T  # one sort of ids for both columns
    both = (i >= 0) & (j >= 0)  # pairs of texts still here
    old = np.maximum(i[both], j[both]) * n + np.minimum(i[both], j[both])
    return np.unique(np.concatenate([new, old]))


class PairSearch(Protocol):
    """A search done elsewhere (``flows/on_dask.py`` on a cluster): the candidate pairs as sorted codes
    ``later * n + earlier`` and each one's verified similarity, unrounded; with ``against`` > 0, only the
    pairs of a later record at or after it and an earlier one before it (the texts before ``against``
    are a reference's, ``reference/match.py``)."""

    def __call__(
        self,
        texts: Sequence[str],
        signatures: Sequence[bytes],
        cjk: np.ndarray,
        config: DedupConfig,
        against: int = 0,
    ) -> tuple[np.ndarray, np.ndarray]: ...


def find_near_duplicates(
    texts: Sequence[str],
    config: DedupConfig,
    signatures: Sequence[bytes] = (),
    cjk: Sequence[bool] | None = None,
    memo: PairMemo | None = None,
    text_keys: Sequence[bytes] = (),
    verified: list[tuple[int, int, float]] | None = None,
    search: PairSearch | None = None,
) -> list[NearMatch]:
    """``texts`` must be in canonical-rank order (best first); returns one match per duplicate.

    ``signatures[i]`` (``signature_of``), where given, is the signature of ``texts[i]`` made earlier;
    ``cjk[i]`` whether text i is Chinese/Japanese/Korean (from its language; else ``cjk_mask``);
    ``memo`` holds the candidate pairs and similarities of an earlier run (``incremental/pair_memo.py``), and
    receives this run's; ``text_keys[i]``, where given, is ``memo.text_key(texts[i])`` made earlier;
    ``verified``, where given, receives (i, j, similarity) of every pair verified, above the threshold or not;
    ``search``, where given, finds and verifies the candidates instead of this process (the memo then
    only receives them).
    """
    mask = cjk_mask(texts) if cjk is None else np.asarray(cjk, dtype=bool)
    keys = ids = np.empty(0)
    if memo is not None:
        keys = _key_rows(texts, text_keys)
        ids = index_keys(keys, mask)
    if search is not None:
        codes, sims = search(texts, signatures, mask, config)
        if memo is not None:
            _record_candidates(memo, ids, codes)

        def similarity(k: int, i: int, j: int) -> float:
            if memo is not None:
                memo.put(_pair_key(keys, i, j), float(sims[k]))
            return float(sims[k])

    else:
        if memo is not None and len(memo.indexed):
            codes = _candidates_with_memo(texts, signatures, config, mask, ids, memo)
        else:
            codes = candidate_pairs(signature_matrix(texts, config, signatures), config, mask)
        unknown = codes
        if memo is not None:
            _record_candidates(memo, ids, codes)
            lacking = [_pair_key(keys, i, j) not in memo.known for i, j in _pairs(codes, len(texts))]
            unknown = codes[np.array(lacking, dtype=bool)]
        needed = _texts_of_pairs(texts, unknown, len(texts))  # a re-run reads only what the memo lacks

        def similarity(k: int, i: int, j: int) -> float:
            return _similarity(needed, i, j, config, memo, keys)

    matches = star_pass(len(texts), codes, similarity, config.threshold, verified)
    verify_shingles.cache_clear()  # up to 4096 shingle sets: memory the rest of the run can use
    return matches


def star_pass(
    n: int,
    codes: np.ndarray,
    similarity: Callable[[int, int, int], float],
    threshold: float,
    verified: list[tuple[int, int, float]] | None = None,
) -> list[NearMatch]:
    """The clusters: each record (the later of its pairs, in rank order) joins the most similar of its
    candidates that are still canonical, if that reaches ``threshold``. ``similarity(k, i, j)``: of pair
    ``codes[k]`` = (i, j); asked only for pairs whose earlier record is still canonical."""
    if not len(codes):
        return []
    later, earlier = codes // n, codes % n
    bounds = (np.flatnonzero(np.diff(later)) + 1).tolist()
    canonical = np.ones(n, dtype=bool)
    matches: list[NearMatch] = []
    for lo, hi in zip([0, *bounds], [*bounds, len(codes)], strict=True):
        i = int(later[lo])
        best, best_sim = None, -1.0
        # ascending: on equal similarity the earlier canonical wins
        for k, j in enumerate(earlier[lo:hi].tolist(), start=lo):
            if not canonical[j]:
                continue
            sim = similarity(k, i, j)
            if verified is not None:
                verified.append((i, j, round(sim, 6)))
            if sim > best_sim:
                best, best_sim = j, sim
        if best is not None and best_sim >= threshold:
            matches.append(NearMatch(i, best, round(best_sim, 6)))
            canonical[i] = False
    return matches
