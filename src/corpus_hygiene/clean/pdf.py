"""PDF-extraction artefacts: split words, letter-spaced words, soft hyphens.

A word broken at a line end comes out of PDF extraction as "intro- duce" or "intro-\\nduce". We join
the halves when the joined form is a real word in the record's language (wordfreq's frequency lists,
not a hand-written list): "gener- alization" → "generalization". When it is not, but both halves are
words, the hyphen was real: "state- space" → "state-space". A hyphen followed by a conjunction is a
suspended compound and stays: "first- and second-order".
"""

from __future__ import annotations

import re

from corpus_hygiene.wordlists import zipf

SOFT_HYPHEN = "\u00ad"
MIN_ZIPF = 1.0  # a word seen at least about once per 100 million words counts as real
_WORDFREQ_LANGS = {
    "en",
    "fr",
    "de",
    "es",
    "pt",
    "it",
    "nl",
    "pl",
    "sv",
    "ru",
    "uk",
    "cs",
    "ro",
    "tr",
    "id",
    "ca",
    "da",
    "fi",
    "nb",
    "hu",
    "el",
    "bg",
    "hr",
    "sk",
    "sl",
    "lt",
    "lv",
    "vi",
}
_CONJUNCTIONS = {
    "and",
    "or",
    "to",
    "nor",
    "versus",
    "vs",
    "und",
    "oder",
    "bis",
    "sowie",
    "et",
    "ou",
    "à",
    "y",
    "o",
    "e",
    "a",
    "en",
    "of",
}
# "intro- duce", "intro-\nduce": a letter, a hyphen, a space or line break, a lower-case letter.
_SPLIT = re.compile(r"(\b[^\W\d_]+)-(?: |[ \t]*\r?\n[ \t]*)([^\W\d_]+)\b")
_LETTER_SPACED = re.compile(r"(?<!\S)((?:[^\W\d_] ){2,}[^\W\d_]{1,2})(?=[\s.,;:!?)]|$)")
_LOGOS = {"latex": "LaTeX", "tex": "TeX", "bibtex": "BibTeX"}


def _is_word(word: str, lang: str) -> bool:
    return zipf(word, lang) >= MIN_ZIPF


def _lang(lang: str | None) -> str:
    return lang if lang in _WORDFREQ_LANGS else "en"


def remove_soft_hyphens(text: str) -> str:
    return text.replace(SOFT_HYPHEN, "")


def join_split_words(text: str, lang: str | None = "en") -> str:
    """Join words split by PDF extraction, by the rule in the module docstring.

    >>> join_split_words("we intro- duce first- and second-order state- space models")
    'we introduce first- and second-order state-space models'
    """
    if "-" not in text:
        return text
    lang = _lang(lang)

    def fix(m: re.Match) -> str:
        left, right = m.group(1), m.group(2)
        if right.lower() in _CONJUNCTIONS or not right[0].islower():
            return m.group(0)
        if _is_word((left + right).lower(), lang):
            return left + right
        if _is_word(left.lower(), lang) and _is_word(right.lower(), lang):
            return f"{left}-{right}"
        return m.group(0)

    return _SPLIT.sub(fix, text)


def join_letter_spacing(text: str, lang: str | None = "en") -> str:
    """Join letter-spaced words that form a known word.

    >>> join_letter_spacing("typeset with L A T EX and A B S T R A C T here")
    'typeset with LaTeX and ABSTRACT here'
    """
    lang = _lang(lang)

    def fix(m: re.Match) -> str:
        joined = m.group(1).replace(" ", "")
        if joined.lower() in _LOGOS:
            return _LOGOS[joined.lower()]
        if len(joined) >= 4 and zipf(joined.lower(), lang) >= 3.0:
            return joined
        return m.group(0)

    return _LETTER_SPACED.sub(fix, text)
