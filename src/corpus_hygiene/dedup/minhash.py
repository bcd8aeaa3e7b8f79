"""MinHash signatures by datasketch's estimator, one numpy pass a text.

What this adds to datasketch's tutorial route (a ``MinHash()`` per document, ``update()`` per shingle,
sha1: ~330 docs/s): one set of permutations shared by every signature, xxhash's 32-bit hash instead of
sha1, and no ``MinHash`` object a text: the shingles' hashes go through datasketch's own pre-mix
(``_fmix``) and affine permutations in one numpy expression, as ``MinHash.update_batch`` computes them
(``tests/test_dedup.py`` holds the two to the same values).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import xxhash
from datasketch import MinHash
from datasketch.minhash import _fmix

from corpus_hygiene.dedup.config import DedupConfig


class Signer:
    """Holds the shared permutations for one config; ``sign`` is then one numpy pass."""

    def __init__(self, config: DedupConfig) -> None:
        template = MinHash(
            num_perm=config.num_perm, seed=config.seed, hashfunc=xxhash.xxh32_intdigest, scheme="affine32"
        )
        self._a, self._b = template.permutations  # uint32 rows: the affine32 scheme's a and b
        self._empty = template.hashvalues  # the signature of no shingle

    def sign(self, shingle_set: Collection[str]) -> np.ndarray:
        """The signature of ``shingle_set``: ``num_perm`` uint32 values."""
        if not shingle_set:
            return self._empty.copy()
        hashes = np.fromiter(map(xxhash.xxh32_intdigest, map(str.encode, shingle_set)), np.uint32)
        return (_fmix(hashes[:, None], 32) * self._a + self._b).min(axis=0)
