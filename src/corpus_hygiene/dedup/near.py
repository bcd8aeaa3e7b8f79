"""Near duplicates: MinHash LSH proposes candidates, a verified similarity decides, and clusters are
stars around a canonical record, so nothing is merged by a chain of resemblances.

Verified similarity of two texts = the exact Jaccard of their verification shingle sets (word or
character bigrams), which forgives reordered sentences; when that falls under the threshold, the
larger of it and their token alignment ratio (``difflib.SequenceMatcher`` on word tokens, or on
characters for Chinese/Japanese), which forgives scattered word edits that break many shingles at once.
A pair that shares only its opening sentences scores low on both (≤ 0.66 on the dev set, where true
near duplicates with up to 25% edits score ≥ 0.82), which is what a shingle threshold alone cannot do.

Records are visited best first (``exact.canonical_rank``). Each is compared with the canonical records
already chosen that LSH proposes; if the best verified similarity reaches the threshold it becomes a
duplicate of that canonical, otherwise a canonical itself. So every duplicate is verified against the
very record it is merged into: with A~B, B~C and A≁C, C is never pulled into A's cluster through B.
Only canonicals enter the LSH index.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from datasketch import MinHashLSH

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.minhash import Signer
from corpus_hygiene.dedup.shingles import jaccard, shingles

_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]|[^\W_]+")


@dataclass(frozen=True, slots=True)
class NearMatch:
    index: int  # the duplicate (position in the input sequence)
    canonical: int  # the record it was merged into
    similarity: float  # the verified similarity


def tokens(text: str) -> tuple[str, ...]:
    """Word tokens, with each CJK character a token of its own (NFKC, case-folded)."""
    return tuple(_TOKEN.findall(unicodedata.normalize("NFKC", text).casefold()))


@lru_cache(maxsize=4096)
def _verify_shingles(text: str, word_n: int, char_n: int) -> frozenset[str]:
    """A canonical is verified against many candidates: its shingle set is built once, not per pair."""
    return shingles(text, word_n, char_n)


def verified_similarity(a: str, b: str, config: DedupConfig) -> float:
    """The verification-shingle Jaccard, or the token alignment ratio when that is larger and needed.

    >>> round(verified_similarity("we train a small model on new data", "we train a tiny model on new data",
    ...                           DedupConfig()), 3)
    0.875
    """
    ja = jaccard(
        _verify_shingles(a, config.verify_word_ngram, config.verify_char_ngram),
        _verify_shingles(b, config.verify_word_ngram, config.verify_char_ngram),
    )
    if ja >= config.threshold or not config.alignment:
        return ja  # verified already: the alignment (~1 ms a pair) is only needed to rescue a pair
    matcher = difflib.SequenceMatcher(None, tokens(a), tokens(b), autojunk=False)
    if matcher.real_quick_ratio() <= ja or matcher.quick_ratio() <= ja:
        return ja  # upper bounds of the ratio: the alignment cannot beat the Jaccard
    return max(ja, matcher.ratio())


def find_near_duplicates(texts: Sequence[str], config: DedupConfig) -> list[NearMatch]:
    """``texts`` must be in canonical-rank order (best first); returns one match per duplicate."""
    signer = Signer(config)
    lsh = MinHashLSH(num_perm=config.num_perm, params=(config.bands, config.rows))
    # The signatures of canonicals (uint32, 512 bytes each for 128 permutations) estimate the Jaccard
    # of a candidate pair at numpy speed: LSH false positives are dropped without touching their text.
    signatures: dict[int, np.ndarray] = {}
    matches: list[NearMatch] = []
    for i, text in enumerate(texts):
        sig = signer.sign(shingles(text, config.lsh_word_ngram, config.lsh_char_ngram))
        values = sig.hashvalues.astype(np.uint32)
        best, best_sim = None, -1.0
        for j in sorted(lsh.query(sig)):
            if np.count_nonzero(values == signatures[j]) < config.min_candidate_jaccard * config.num_perm:
                continue
            sim = verified_similarity(text, texts[j], config)
            if sim > best_sim:
                best, best_sim = j, sim
        if best is not None and best_sim >= config.threshold:
            matches.append(NearMatch(i, best, round(best_sim, 6)))
        else:
            lsh.insert(i, sig)
            signatures[i] = values
    return matches
