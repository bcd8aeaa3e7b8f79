"""langdetect's detector with its two inner loops made cheap; the same answers to the last bit.

What the wrapper adds: langdetect spends most of an abstract's time in two Python loops, one call per
character (the n-gram scan) and one per language per drawn n-gram (the probability update). Here the
scan normalises the text with one ``str.translate`` and takes each word's n-grams from a cache, and
the update multiplies a numpy row of the same profile. The n-grams, the random draws and every
floating-point operation are langdetect's, in its order (tests/test_langdetect_detector.py compares both
detectors on real abstracts and generated text).
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
from langdetect import DetectorFactory
from langdetect.detector import Detector
from langdetect.detector_factory import PROFILES_DIRECTORY
from langdetect.lang_detect_exception import ErrorCode, LangDetectException
from langdetect.utils.ngram import NGram


class _Normalised(dict):
    """Code point → ``NGram.normalize`` of it, computed once a character (a ``str.translate`` table)."""

    def __missing__(self, code: int) -> str:
        ch = self[code] = NGram.normalize(chr(code))
        return ch


_NORMALISED = _Normalised()
_WORD = re.compile(r"[^ ]+ ?")  # a word of normalised text and the space that ends it


@lru_cache(maxsize=1 << 16)
def _word_rows(word: str) -> tuple[int, ...]:
    """The profile rows of the n-grams ``NGram.add_char`` yields for ``word``, from its fresh state."""
    rows = _factory()[0].word_lang_prob_map
    found = []
    grams = " "
    for ch in word:
        last = grams[-1]
        if last == " ":
            grams = " "
        elif len(grams) >= NGram.N_GRAM:
            grams = grams[1:]
        grams += ch
        if ch.isupper() and last.isupper():  # inside a run of capitals: no n-grams
            continue
        for n in range(1, min(len(grams), NGram.N_GRAM) + 1):
            gram = grams[-n:]
            if gram != " " and gram in rows:
                found.append(rows[gram])
    return tuple(found)


class ArrayDetector(Detector):
    """A fresh, seeded detector (langdetect's are single-use) over the profiles of ``_factory``: its map
    gives an n-gram's row of ``table``."""

    def __init__(self, seed: int):
        loaded, self.table = _factory()
        super().__init__(loaded)
        self.seed = seed  # as ``DetectorFactory.set_seed`` would

    def _extract_ngrams(self) -> list[int]:
        """The rows of ``Detector._extract_ngrams``'s n-grams, in its order.

        ``NGram`` starts afresh after every space, so a word (with the space after it) always gives
        the same n-grams: they are computed once a word.
        """
        found: list[int] = []
        for word in _WORD.findall(self.text.translate(_NORMALISED)):
            found.extend(_word_rows(word))
        return found

    def _detect_block(self) -> None:
        self.cleaning_text()
        rows = self._extract_ngrams()
        if not rows:
            raise LangDetectException(ErrorCode.CantDetectError, "No features in text.")
        size = len(self.langlist)
        langprob = np.zeros(size)
        self.random.seed(self.seed)
        for _ in range(self.n_trial):
            prob = np.full(size, 1.0 / size)
            alpha = self.alpha + self.random.gauss(0.0, 1.0) * self.ALPHA_WIDTH
            weight = alpha / self.BASE_FREQ
            i = 0
            while True:
                prob *= weight + self.table[self.random.choice(rows)]
                if i % 5 == 0:
                    prob /= sum(prob.tolist())  # Python's left-to-right sum, as langdetect's
                    if prob.max() > self.CONV_THRESHOLD or i >= self.ITERATION_LIMIT:
                        break
                i += 1
            langprob += prob / self.n_trial
        self.langprob = langprob.tolist()


@lru_cache(maxsize=1)
def _factory() -> tuple[DetectorFactory, np.ndarray]:
    """``DetectorFactory.load_profile``, each n-gram's probabilities a row of one float array.

    The profiles are read here, one language at a time, because langdetect's map (a list of 55 floats
    per n-gram) would stay in the process's heap after being copied into the array.
    """
    loaded = DetectorFactory()
    rows: dict[str, int] = {}
    columns = []
    for name in os.listdir(PROFILES_DIRECTORY):  # langdetect's order, which is its language order
        if name.startswith("."):
            continue
        profile = json.loads(Path(PROFILES_DIRECTORY, name).read_text(encoding="utf-8"))
        loaded.langlist.append(profile["name"])
        grams = [gram for gram in profile["freq"] if 1 <= len(gram) <= NGram.N_GRAM]
        at = np.array([rows.setdefault(gram, len(rows)) for gram in grams], dtype=np.int64)
        # 1.0 * count / words: langdetect's expression, so the same floats
        prob = np.array([1.0 * profile["freq"][g] / profile["n_words"][len(g) - 1] for g in grams])
        columns.append((at, prob))
    table = np.zeros((len(rows), len(columns)))
    for column, (at, prob) in enumerate(columns):
        table[at, column] = prob
    loaded.word_lang_prob_map = rows
    return loaded, table
