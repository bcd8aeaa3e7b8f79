"""Quality signals of a cleaned abstract: the columns a curator filters on, decided by the policy.

Words are runs of letters and digits; in Chinese and Japanese script (Han, kana) every character is
a word (no segmenter needed). Korean separates words with spaces, like Latin script. Stop words are
the language's most frequent words in wordfreq (bundled with the package, nothing downloaded); for a
language wordfreq has no list of whole words for (Korean: its list holds morphemes), the share is
null and no threshold applies.

Contact details: e-mail addresses (a pattern) and phone numbers written in international form
(``phonenumbers``, Google's libphonenumber rules: a ``+`` and a country code, validated, so that
years, DOIs and IP addresses are not read as numbers). Only their counts are kept; ``mask_contacts``
replaces them for the policy's ``mask`` action.

>>> s = signals_of("We propose a model. Contact: ada@lab.org or +44 20 7946 0958.", "en")
>>> s.n_words, s.pii
(13, {'email': 1, 'phone': 1})
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from corpus_hygiene.language.scripts import char_class
from corpus_hygiene.tokens import ascii_words
from corpus_hygiene.unicode_marks import MarksPattern

STOP_WORDS_PER_LANGUAGE = 100
REPEAT_MAX_N = 50  # a repeat longer than this covers the text as fully as a longer one would
_CJK = char_class("kana", "han", "thai")  # no spaces between words
# one CJK character, or a run of other letters, digits and combining marks (an Indic word is one word)
_WORD = MarksPattern(f"[{_CJK}]|(?:[^\\W_{_CJK}]|[" + "{marks}])+")
# the same words where the text has no combining mark (one class a character, twice as fast), or is ASCII
_WORD_NO_MARKS = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")
_NOT_LETTER = re.compile(r"[\W\d_]+")
_MARK = MarksPattern("[{marks}]")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}\b")
_MAYBE_PHONE = re.compile(r"\+\s*\d[\d\s().-]{5,}\d")  # only such texts go to phonenumbers


# The signals stored as columns of their own (``pii`` is a struct column beside them).
SIGNAL_COLUMNS = (
    "n_words",
    "mean_word_length",
    "alpha_share",
    "stopword_share",
    "repeated_ngram_share",
    "n_urls",
)


@dataclass(frozen=True, slots=True)
class Signals:
    n_words: int
    mean_word_length: float  # characters per word (0.0 without words)
    alpha_share: float  # letters among the non-space characters
    stopword_share: float | None  # words among the language's stop words; None: no list for it
    repeated_ngram_share: float  # words covered by the repeats of the longest repeated word n-gram
    n_urls: int
    pii: dict[str, int]  # {"email": n, "phone": n}: counts only, never the values

    def columns(self) -> dict:
        """The records table's signal columns, ``pii`` included."""
        return {**{c: getattr(self, c) for c in SIGNAL_COLUMNS}, "pii": self.pii}


def words(text: str) -> list[str]:
    """Case-folded words; each CJK character is one.

    >>> words("We use BERT-base 模型")
    ['we', 'use', 'bert', 'base', '模', '型']
    """
    if text.isascii():
        return list(ascii_words(text))
    folded = text.casefold()
    if folded.isascii():  # "ß" folds to "ss"
        return list(ascii_words(folded))
    if _MARK(folded).search(folded) is None:
        return _WORD_NO_MARKS.findall(folded)
    return _WORD(folded).findall(folded)


@lru_cache(maxsize=64)
def stop_words(lang: str) -> frozenset[str] | None:
    # wordfreq and phonenumbers are imported on first use: the CLI's unchanged short-cut and the
    # readers import this module for SIGNAL_COLUMNS only
    from wordfreq import available_languages

    from corpus_hygiene.wordlists import top_words

    if lang not in available_languages(wordlist="small") or lang in ("ko", "ta"):
        # wordfreq splits Korean words into morphemes (particles apart): no list of words; Tamil glues
        # its function words to the word as suffixes (UDHR paragraphs: median share 5%)
        return None
    # the "small" list's top words are the "best" list's (tests/test_signals.py), and it is the shorter read
    if lang in ("zh", "ja"):  # words are characters here: the single-character stop words
        return frozenset(w for w in top_words(lang, 4 * STOP_WORDS_PER_LANGUAGE, "small") if len(w) == 1)
    return frozenset(top_words(lang, STOP_WORDS_PER_LANGUAGE, "small"))


def repeated_ngram_share(tokens: list[str], max_n: int = REPEAT_MAX_N) -> float:
    """The share of ``tokens`` covered by every occurrence of the longest n-gram (n ≤ ``max_n``) that
    occurs twice or more.

    >>> repeated_ngram_share("buy now buy now buy now".split()), repeated_ngram_share("a b c d".split())
    (1.0, 0.0)
    """
    # Only a position whose n-gram repeats can start a repeated (n+1)-gram: the candidates shrink
    # with n, so ordinary text takes a few short passes. The search starts at bigrams (nearly every
    # text repeats a word); keys are hashes of (n-gram key, next token).
    keys: dict[int, object] = {i: (tokens[i], tokens[i + 1]) for i in range(len(tokens) - 1)}
    best: dict[int, object] = {}
    best_n = n = 1
    while keys and n < max_n:
        n += 1
        counts = Counter(keys.values())
        repeated = {i: k for i, k in keys.items() if counts[k] > 1}
        if not repeated:
            break
        best, best_n = repeated, n
        keys = {i: hash((k, tokens[i + n])) for i, k in repeated.items() if i + n < len(tokens)}
    if not best:  # no phrase repeats: the words that do
        counts = Counter(tokens)
        best = {i: w for i, w in enumerate(tokens) if counts[w] > 1}
        best_n = 1
    if not best:
        return 0.0
    covered = {i + k for i in best for k in range(best_n)}
    return len(covered) / len(tokens)


def count_contacts(text: str) -> dict[str, int]:
    phones = 0
    if "+" in text and _MAYBE_PHONE.search(text):
        import phonenumbers

        phones = sum(1 for _ in phonenumbers.PhoneNumberMatcher(text, None))
    return {"email": len(_EMAIL.findall(text)) if "@" in text else 0, "phone": phones}


def mask_contacts(text: str) -> str:
    """E-mail addresses and phone numbers replaced by ``[email]`` and ``[phone]``."""
    text = _EMAIL.sub("[email]", text)
    if _MAYBE_PHONE.search(text):
        import phonenumbers

        for match in reversed(list(phonenumbers.PhoneNumberMatcher(text, None))):
            text = text[: match.start] + "[phone]" + text[match.end :]
    return text


def signals_of(text: str, lang: str) -> Signals:
    tokens = words(text)
    non_space = len(text) - sum(map(text.count, " \n\t"))
    stops = stop_words(lang)
    # a combining mark (an Indic vowel sign) is part of a letter in the letter share
    marks = 0 if text.isascii() else len(_MARK(text).findall(text))
    return Signals(
        n_words=len(tokens),
        mean_word_length=sum(map(len, tokens)) / len(tokens) if tokens else 0.0,
        alpha_share=(len(_NOT_LETTER.sub("", text)) + marks) / non_space if non_space else 0.0,
        stopword_share=(
            None if stops is None else (sum(1 for w in tokens if w in stops) / len(tokens) if tokens else 0.0)
        ),
        # Thai's few letters repeat as n-grams in any text: its repeats are read over its phrases
        repeated_ngram_share=repeated_ngram_share(text.casefold().split() if lang == "th" else tokens),
        n_urls=len(_URL.findall(text)) if "://" in text or "www." in text.lower() else 0,
        pii=count_contacts(text),
    )
