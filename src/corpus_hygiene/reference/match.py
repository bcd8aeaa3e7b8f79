"""Which of a run's records repeat a reference row or contain a reference item (``index.py``).

For each record, in this order: an exact copy (its ``record_id`` is a reference row's key), a near
copy (LSH proposes reference rows as it proposes a run's pairs, ``lsh.fresh_candidate_pairs``; the
verified similarity decides, at the run's threshold), or a contamination (it contains at least the
policy's share of a short reference text's n-grams). The first reference wins a tie. Records are
matched ``CHUNK`` at a time: memory holds one chunk's signatures and texts, and the references' keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace

import numpy as np
import pyarrow as pa

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.exact import lookup
from corpus_hygiene.dedup.lsh import fresh_candidate_pairs
from corpus_hygiene.dedup.signatures import signature_matrix
from corpus_hygiene.dedup.similarity import tokens, verified_similarity, verify_shingles
from corpus_hygiene.models import Rejected
from corpus_hygiene.reference.contamination import Contamination, contained
from corpus_hygiene.reference.index import IndexedReference
from corpus_hygiene.store.keys import Keys
from corpus_hygiene.store.records import RecordStore
from corpus_hygiene.store.rows import ReferenceCopies

CHUNK = 1 << 15
EXACT, NEAR, CONTAINS = 0, 1, 2  # a match's kind, best first


@dataclass(frozen=True, eq=False)
class Matches:
    """The matched records (``record``: indices into the run's records, ascending) and, for each, the
    reference, its row, the kind (``EXACT``, ``NEAR``, ``CONTAINS``) and the similarity or share."""

    record: np.ndarray
    reference: np.ndarray
    row: np.ndarray
    kind: np.ndarray
    score: np.ndarray

    def __len__(self) -> int:
        return len(self.record)

    def take(self, at: np.ndarray) -> Matches:
        return Matches(*(getattr(self, f.name)[at] for f in fields(self)))

    @staticmethod
    def join(parts: list[Matches]) -> Matches:
        empty = Matches(*(np.zeros(0, t) for t in (np.int64, np.int64, np.int64, np.int8, np.float64)))
        return Matches(
            *(np.concatenate([getattr(m, f.name) for m in [empty, *parts]]) for f in fields(empty))
        )


class Joined(Sequence):
    """A reference's column followed by a chunk's, read as one Arrow column a slice at a time: what a
    ``PairSearch`` reads its texts and signatures from (``cluster_search.make_chunk``)."""

    def __init__(self, theirs: pa.ChunkedArray, mine: list, as_type: pa.DataType) -> None:
        self._all = pa.chunked_array([*theirs.chunks, pa.array(mine, theirs.type)], theirs.type)
        self._as = as_type

    def __len__(self) -> int:
        return len(self._all)

    def arrow(self, records: slice) -> pa.Array:
        start, stop, _ = records.indices(len(self))
        return self._all.slice(start, stop - start).combine_chunks().cast(self._as)

    def __getitem__(self, i):
        return self.arrow(i).to_pylist() if isinstance(i, slice) else self.arrow(slice(i, i + 1))[0].as_py()


def _near(
    ref: IndexedReference, texts: list[str], signatures: np.ndarray, cjk: np.ndarray, config, search=None
):
    """Each text's most similar reference row at or above the threshold: (text, row, similarity).
    ``search``: a ``near.PairSearch`` that finds and verifies the pairs (on a cluster), else here."""
    n_ref, n = len(ref), len(texts)
    both_cjk = np.r_[ref.table.column("cjk").to_numpy(), cjk]
    if search is not None:
        blobs = [row.astype("<u4").tobytes() for row in signatures]
        joined = (Joined(ref.table.column("text"), texts, pa.string()),
                  Joined(ref.table.column("signature"), blobs, pa.binary()))  # fmt: skip
        codes, sims = search(*joined, both_cjk, config, against=n_ref)
        text, row = codes // (n_ref + n) - n_ref, codes % (n_ref + n)
    else:
        fresh = np.r_[np.zeros(n_ref, bool), np.ones(n, bool)]
        codes = fresh_candidate_pairs(ref.signature_slices(), fresh, signatures, config, both_cjk)
        text, row = codes // (n_ref + n) - n_ref, codes % (n_ref + n)
        wanted = np.unique(row)
        ref_texts = dict(zip(wanted.tolist(), ref.texts(wanted), strict=True))
        sims = np.array([verified_similarity(texts[i], ref_texts[r], config)
                         for i, r in zip(text.tolist(), row.tolist(), strict=True)])  # fmt: skip
        verify_shingles.cache_clear()
    sims = np.round(sims, 6)
    order = np.lexsort((row, -sims, text))  # per text: most similar, then the earlier row
    text, row, sims = text[order], row[order], sims[order]
    first = np.r_[True, text[1:] != text[:-1]][: len(text)] & (sims >= config.threshold)
    return text[first], row[first], sims[first]


def match_chunk(
    refs: Sequence[IndexedReference],
    ids: np.ndarray,
    texts: list[str],
    signatures: np.ndarray,
    cjk: np.ndarray,
    config: DedupConfig,
    params: Contamination,
    search=None,
) -> Matches:
    """The matches of one chunk of records: their ``ids`` (S16), texts, signature rows and CJK flags;
    ``search``: a ``near.PairSearch`` for the near copies (on a cluster), else found here."""
    n = len(texts)
    kind, score = np.full(n, 3, np.int8), np.zeros(n)
    reference, row = np.full(n, -1, np.int64), np.full(n, -1, np.int64)

    def better(at: np.ndarray, k: int, rows: np.ndarray, how: int, scores: np.ndarray) -> None:
        wins = (how < kind[at]) | ((how == kind[at]) & (scores > score[at]))
        at = at[wins]
        kind[at], score[at], reference[at], row[at] = how, scores[wins], k, rows[wins]

    for k, ref in enumerate(refs):
        found, at = lookup(ref.keys, ids, ref.key_rows)
        better(np.flatnonzero(found), k, at[found], EXACT, np.ones(int(found.sum())))
        open_ = np.flatnonzero(kind > EXACT)
        if len(open_) and len(ref):
            mine = [texts[j] for j in open_.tolist()]
            i, r, sims = _near(ref, mine, signatures[open_], cjk[open_], config, search)
            better(open_[i], k, r, NEAR, sims)
        open_ = np.flatnonzero(kind > NEAR)
        if len(open_) and len(ref.items):
            item, share = contained([texts[j] for j in open_.tolist()], ref.items)
            hit = (item >= 0) & (share >= params.threshold)
            better(open_[hit], k, item[hit], CONTAINS, np.round(share[hit], 6))
    at = np.flatnonzero(kind < 3)
    return Matches(at, reference[at], row[at], kind[at], score[at])


def match_records(
    refs: Sequence[IndexedReference],
    ids: np.ndarray,
    fetch: Callable[[str, np.ndarray], Sequence],
    cjk: np.ndarray,
    config: DedupConfig,
    params: Contamination,
    search=None,
) -> Matches:
    """The matches of every record: ``ids`` (S16, one a record), ``fetch(name, records)`` their ``text``
    or ``signature`` (``RecordStore.column``), ``cjk`` their CJK flags; ``search``: as ``match_chunk``'s."""
    parts = []
    for lo in range(0, len(ids) if refs else 0, CHUNK):
        at = np.arange(lo, min(len(ids), lo + CHUNK))
        texts = list(fetch("text", at))
        signatures = signature_matrix(texts, config, fetch("signature", at))
        found = match_chunk(refs, ids[at], texts, signatures, cjk[at], config, params, search)
        parts.append(replace(found, record=found.record + lo))
    return Matches.join(parts)


ITEM_CHARS = 120  # of a contaminating item, quoted in the quarantine row's detail


def _rows_of(matches: Matches, refs: Sequence[IndexedReference], what: str) -> list:
    """Each match's reference row's ``pointers`` (id, file#row) or ``texts``, read a reference at a time."""
    out = np.empty(len(matches), object)
    for k, ref in enumerate(refs):
        mine = np.flatnonzero(matches.reference == k)
        if what == "texts":
            out[mine] = ref.texts(matches.row[mine])
        else:
            ids, rows = ref.pointers(matches.row[mine])
            out[mine] = list(zip(ids, rows, strict=True))
    return out.tolist()


def placed(
    matches: Matches, refs: Sequence[IndexedReference], keys: Keys, store: RecordStore, params: Contamination
) -> tuple[ReferenceCopies, list[Rejected]]:
    """The matched records as the duplicates table's reference copies and as quarantine rows
    (``contaminated``)."""
    copies = matches.take(np.flatnonzero(matches.kind != CONTAINS))
    ids, rows = zip(*_rows_of(copies, refs, "pointers"), strict=True) if len(copies) else ((), ())
    names = [refs[k].ref.name for k in copies.reference.tolist()]
    reasons = [
        f"{'same dedup key as' if kind == EXACT else 'a near copy of'} {row} in reference {name}"
        for kind, row, name in zip(copies.kind.tolist(), rows, names, strict=True)
    ]
    reference_copies = ReferenceCopies(copies.record, names, list(ids), list(rows), copies.score, reasons)
    dirty = matches.take(np.flatnonzero(matches.kind == CONTAINS))
    record = keys.take(dirty.record)
    raw = store.take(["text_raw"], record.pos).column(0).to_pylist()
    found = zip(dirty.reference.tolist(), _rows_of(dirty, refs, "pointers"), _rows_of(dirty, refs, "texts"),
                dirty.score.tolist(), raw, strict=True)  # fmt: skip
    rejected = []
    for where, (k, (item_id, item_ref), text, share, text_raw) in zip(record, found, strict=True):
        quoted = text if len(text) <= ITEM_CHARS else text[:ITEM_CHARS] + "…"
        span = params.span(len(tokens(text)))
        detail = (
            f"contains {share:.0%} of the {span}-word spans of {item_id or item_ref} in reference "
            f"{refs[k].ref.name}: “{quoted}”"
        )
        rejected.append(Rejected(where.source_file, where.source_line, "contaminated", detail, text_raw))
    return reference_copies, rejected


EXAMPLES = 3  # matches shown per reference in the report, the first in provenance order
EXAMPLE_CHARS = 1500
KIND_NAMES = {EXACT: "exact", NEAR: "near", CONTAINS: "contaminated"}


def summary(matches: Matches, refs: Sequence[IndexedReference], keys: Keys, store: RecordStore) -> list[dict]:
    """Each reference as the metrics, the report and the card tell it: what it is, what its index
    holds, how many records it removed of each kind, and a few of them beside its rows."""
    out = []
    for k, ref in enumerate(refs):
        mine = matches.take(np.flatnonzero(matches.reference == k))
        counts = np.bincount(mine.kind, minlength=3).tolist()
        shown = mine.take(keys.take(mine.record).provenance_order()[:EXAMPLES])
        record = keys.take(shown.record)
        raw = store.take(["text_raw"], record.pos).column(0).to_pylist()
        pointers, theirs = _rows_of(shown, refs, "pointers"), _rows_of(shown, refs, "texts")
        examples = [
            {
                "ref": where,
                "kind": KIND_NAMES[kind],
                "score": score,
                "text": text[:EXAMPLE_CHARS],
                "pointer": pointer_id or row,
                "reference_text": reference_text[:EXAMPLE_CHARS],
            }
            for where, kind, score, text, (pointer_id, row), reference_text in zip(
                record.refs(), shown.kind.tolist(), shown.score.tolist(), raw, pointers, theirs, strict=True)
        ]  # fmt: skip
        out.append(
            ref.ref.describe()
            | {"rows": len(ref), "short_texts": len(ref.items), "indexed_now": ref.built}
            | {"exact": counts[EXACT], "near": counts[NEAR], "contaminated": counts[CONTAINS]}
            | {"examples": examples}
        )
    return out
