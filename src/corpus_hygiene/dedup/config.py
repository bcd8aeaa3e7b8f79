"""Every parameter that shapes dedup results, in one typed config whose hash goes into the manifest.

Defaults chosen on the dev set of benchmarks/bench_dedup.py (numbers in the issue notes): unigram
shingles give LSH the recall it needs at 25% edits (bigram Jaccard falls to ~0.4 there, where
shared-opening negatives already reach 0.48); the verified similarity then separates the two.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class DedupConfig:
    lsh_word_ngram: int = 1  # MinHash/LSH shingles, space-delimited scripts (words)
    lsh_char_ngram: int = 1  # MinHash/LSH shingles, Chinese/Japanese runs (characters)
    lsh_skip_common: int = 100  # drop each language's N most frequent words (wordfreq) from LSH shingles
    num_perm: int = 128  # MinHash permutations
    bands: int = 32  # LSH bands × rows must equal num_perm; 32×4 proposes pairs from Jaccard ≈ 0.42
    rows: int = 4
    min_candidate_jaccard: float = 0.4  # exact Jaccard of the LSH shingle sets below which a candidate drops
    # the same for two Chinese/Japanese texts: their character unigram sets overlap far more by chance
    min_candidate_jaccard_cjk: float = 0.6
    verify_word_ngram: int = 2  # shingles of the verified Jaccard (words)
    verify_char_ngram: int = 2  # shingles of the verified Jaccard (characters)
    alignment: bool = True  # also credit the token alignment ratio (see dedup/near.py)
    alignment_floor: float = 0.2  # ...only for pairs whose verification Jaccard reaches this
    threshold: float = 0.70  # verified similarity at or above which two records are near duplicates
    seed: int = 1  # MinHash permutation seed: fixed, so signatures are the same in every run

    def __post_init__(self) -> None:
        if self.bands * self.rows != self.num_perm:
            raise ValueError(f"bands × rows ({self.bands}×{self.rows}) must equal num_perm ({self.num_perm})")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]
