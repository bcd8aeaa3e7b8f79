"""Named record checks: what a clean abstract must satisfy, each registered with pandera by name.

Each check is a vectorised predicate over the candidate-records frame (True = passes) plus a sentence
for people that says which value broke which limit. The order of ``RECORD_CHECKS`` is the order in
which a record's first failure is reported.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd
import pandera.extensions as extensions

from corpus_hygiene.clean.latex.spans import latex_residue
from corpus_hygiene.language.scripts import CHARACTER_WORD_LANGUAGES, CJK_CHARS, SHORT_WORD_LANGUAGES

ISO_639_1 = frozenset(
    (
        "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy "
        "da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu "
        "hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb "
        "lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om "
        "or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw "
        "ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu"
    ).split()
) | {"und"}

# the characters a UTF-8 continuation byte (0x80–0xBF) reads as in Latin-1 or cp1252
_BYTE = "".join(
    sorted(
        {chr(b) for b in range(0x80, 0xC0)}
        | {bytes([b]).decode("cp1252", "ignore") for b in range(0x80, 0xC0)}
    )
)
# UTF-8 read as cp1252 or Latin-1: "Ã©", "Â°", "â€™", "â„¢", or a replacement character. After "â" a
# curly quote counts only when a third byte's character follows ("â”€"): Welsh writes "â’r" and "â’i".
MOJIBAKE_RESIDUE = (
    "[ÂÃ][\u0080-\u00bf\u2018-\u201e\u20ac\u2122]|â[\u0080-\u00bf\u201a\u201e\u20ac\u2122]"
    f"|â[\u2018\u2019\u201c\u201d][{_BYTE}]|\ufffd"
)
# A zero-width (non-)joiner counts where the cleaner removes it (clean/normalise.py): at the start, after
# a space or after ASCII. One character class first, the joiner's rule as a look-behind: Python's re then
# scans for the class (pyarrow's regex has no look-behind; pandas hands this pattern to re).
INVISIBLE = (
    "[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
    "(?<![^\\s\x00-\x7f][\u200c\u200d])"
)
_NOT_ALNUM = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class RecordCheck:
    name: str
    params: tuple[str, ...]  # the policy values it reads (its pandera statistics)
    passes: Callable[..., pd.Series]  # (frame, **params) → True where the record passes
    detail: Callable[..., str]  # (row, **params) → a sentence for people


def _placeholder_key(text: str) -> str:
    return _NOT_ALNUM.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@lru_cache(maxsize=8)
def _longest(placeholders: frozenset[str]) -> int:
    return max(map(len, placeholders), default=0)


_CJK = re.compile(f"[{CJK_CHARS}]")


@lru_cache(maxsize=8)
def _phrases(placeholders: frozenset[str]) -> tuple[str, ...]:
    """The placeholders a short text may start with: two words of two letters or more ("coming soon"),
    or three CJK characters or more ("暂无摘要"). A single word ("todo", "none", "摘要") must be the whole
    text: in some language it starts real sentences ("Todo individuo tiene derecho…")."""
    return tuple(
        p
        for p in sorted(placeholders)
        if sum(len(w) > 1 for w in p.split()) >= 2 or len(_CJK.findall(p)) >= 3
    )


def is_placeholder(text: str, placeholders: frozenset[str], placeholder_max_chars: int) -> bool:
    """A placeholder, or a short text that starts with a placeholder phrase (``_phrases``).

    >>> is_placeholder("Abstract to appear.", frozenset({"abstract to appear"}), 120)
    True
    >>> is_placeholder("Todo individuo tiene derecho a la vida.", frozenset({"todo"}), 120)
    False
    """
    if len(text) > max(placeholder_max_chars, 8 * _longest(placeholders)):
        return False  # cleaned text (single spaces) this long cannot normalise down to a placeholder
    key = _placeholder_key(text)
    if key in placeholders:
        return True
    if len(text) <= placeholder_max_chars:
        return any(key.startswith(p + " ") for p in _phrases(placeholders))
    return False


def is_repetitive(text: str, repetition_min_words: int, min_distinct_word_ratio: float) -> bool:
    """Whitespace words (str.split: C speed, 1M abstracts in seconds). Chinese and Japanese text has
    almost no spaces, so it never reaches repetition_min_words: this check is for word filler.

    >>> is_repetitive("test " * 30, 20, 0.25), is_repetitive("we propose a new model " * 2, 20, 0.25)
    (True, False)
    """
    words = text.casefold().split()
    if len(words) < repetition_min_words:
        return False
    return len(set(words)) / len(words) < min_distinct_word_ratio


def has_latex_residue(text: pd.Series) -> pd.Series:
    """True where ``clean.latex.latex_residue`` finds LaTeX: the cleaner's own rule for what is math.
    Only texts with a backslash or a dollar (pyarrow's regex, vectorised) are read in Python."""
    out = pd.Series(False, index=text.index)
    maybe = text.str.contains(r"[\\$]", regex=True)
    out[maybe] = text[maybe].map(lambda t: bool(latex_residue(t)))
    return out.astype(bool)


def _shortest(lang, min_mean_word_length: float):
    """The lowest mean word length allowed: a letter less in the languages of short words."""
    if isinstance(lang, str):
        return min_mean_word_length - (lang in SHORT_WORD_LANGUAGES)
    return min_mean_word_length - lang.isin(SHORT_WORD_LANGUAGES).astype(float)


def _first(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    return found.group(0) if found else ""


def _lost(r) -> str:
    words = ", ".join(r["lost_words"][:8]) + (", …" if len(r["lost_words"]) > 8 else "")
    n = len(r["lost_words"])
    return f"cleaning removed {n} word{'s' * (n != 1)} that were not markup ({words})"


RECORD_CHECKS: tuple[RecordCheck, ...] = (
    RecordCheck(
        "text_lost",
        ("max_lost_words",),
        lambda df, max_lost_words: df["lost_words"].map(len) <= max_lost_words,
        lambda r, max_lost_words: f"{_lost(r)}; the policy allows {max_lost_words}",
    ),
    RecordCheck(
        "not_placeholder",
        ("placeholders", "placeholder_max_chars"),
        lambda df, placeholders, placeholder_max_chars: (
            ~df["text"].map(lambda t: is_placeholder(t, placeholders, placeholder_max_chars)).astype(bool)
        ),
        lambda r, **_: f"the text {r['text'][:60]!r} is a placeholder, not an abstract",
    ),
    RecordCheck(
        "text_length",
        ("min_chars", "max_chars"),
        lambda df, min_chars, max_chars: df["n_chars"].between(min_chars, max_chars),
        lambda r, min_chars, max_chars: (
            f"{r['n_chars']:,} characters after cleaning; the policy allows {min_chars:,} to {max_chars:,}"
        ),
    ),
    RecordCheck(
        "not_repetitive",
        ("repetition_min_words", "min_distinct_word_ratio"),
        lambda df, repetition_min_words, min_distinct_word_ratio: (
            ~df["text"]
            .map(lambda t: is_repetitive(t, repetition_min_words, min_distinct_word_ratio))
            .astype(bool)
        ),
        lambda r, min_distinct_word_ratio, **_: (
            f"under {min_distinct_word_ratio:.0%} of its words are distinct: repeated filler, not an abstract"
        ),
    ),
    RecordCheck(
        "word_count",
        ("min_words",),
        lambda df, min_words: df["n_words"] >= min_words,
        lambda r, min_words: f"{r['n_words']} words; the policy asks for at least {min_words:g}",
    ),
    RecordCheck(
        "mean_word_length",
        ("min_mean_word_length", "max_mean_word_length"),
        lambda df, min_mean_word_length, max_mean_word_length: (
            df["lang"].isin(CHARACTER_WORD_LANGUAGES)
            | (
                (df["mean_word_length"] >= _shortest(df["lang"], min_mean_word_length))
                & (df["mean_word_length"] <= max_mean_word_length)
            )
        ),
        lambda r, min_mean_word_length, max_mean_word_length: (
            f"words of {r['mean_word_length']:.1f} characters on average; the policy allows "
            f"{_shortest(r['lang'], min_mean_word_length):g} to {max_mean_word_length:g}"
        ),
    ),
    RecordCheck(
        "alpha_share",
        ("min_alpha_share",),
        lambda df, min_alpha_share: df["alpha_share"] >= min_alpha_share,
        lambda r, min_alpha_share: (
            f"{r['alpha_share']:.0%} of its characters are letters; the policy asks for {min_alpha_share:.0%}"
        ),
    ),
    RecordCheck(
        "stopword_share",
        ("min_stopword_share",),
        lambda df, min_stopword_share: (df["stopword_share"] >= min_stopword_share).fillna(True).astype(bool),
        lambda r, min_stopword_share: (
            f"{r['stopword_share']:.0%} of its words are common {r['lang']!r} words (terms or code, "
            f"not prose); the policy asks for {min_stopword_share:.0%}"
        ),
    ),
    RecordCheck(
        "repeated_ngrams",
        ("max_repeated_ngram_share",),
        lambda df, max_repeated_ngram_share: df["repeated_ngram_share"] <= max_repeated_ngram_share,
        lambda r, max_repeated_ngram_share: (
            f"{r['repeated_ngram_share']:.0%} of its words are repeats of one phrase; the policy allows "
            f"{max_repeated_ngram_share:.0%}"
        ),
    ),
    RecordCheck(
        "url_count",
        ("max_urls",),
        lambda df, max_urls: df["n_urls"] <= max_urls,
        lambda r, max_urls: f"{r['n_urls']} links; the policy allows {max_urls:g}",
    ),
    RecordCheck(
        "contact_details",
        ("contacts",),
        lambda df, contacts: (
            df["pii"].map(lambda pii: not any(pii.values())).astype(bool)
            if contacts == "quarantine"
            else pd.Series(True, index=df.index)
        ),
        lambda r, **_: (
            f"contact details in the text ({r['pii']['email']} e-mail addresses, {r['pii']['phone']} phone "
            "numbers); the policy quarantines them"
        ),
    ),
    RecordCheck(
        "no_latex_residue",
        (),
        lambda df: ~has_latex_residue(df["text"]),
        lambda r: f"LaTeX left after cleaning: {latex_residue(r['text'])[:40]!r}",
    ),
    RecordCheck(
        "no_mojibake_residue",
        (),
        lambda df: ~df["text"].str.contains(MOJIBAKE_RESIDUE, regex=True),
        lambda r: f"mis-decoded characters left after repair: {_first(MOJIBAKE_RESIDUE, r['text'])!r}",
    ),
    RecordCheck(
        "no_invisible_chars",
        (),
        lambda df: ~df["text"].str.contains(INVISIBLE, regex=True),
        lambda r: (
            f"invisible character U+{ord(_first(INVISIBLE, r['text'])[-1:] or ' '):04X} left in the text"
        ),
    ),
    RecordCheck(
        "lang_iso639_1",
        (),
        lambda df: df["lang"].isin(ISO_639_1),
        lambda r: f"language code {r['lang']!r} is not ISO 639-1 or 'und'",
    ),
    RecordCheck(
        "year_plausible",
        ("year_min", "year_max"),
        lambda df, year_min, year_max: df["year"].between(year_min, year_max).fillna(False).astype(bool),
        lambda r, year_min, year_max: (
            f"year {r['year']} from the file header is outside {year_min}–{year_max}"
            if pd.notna(r["year"])
            else "the file header names no year"
        ),
    ),
    RecordCheck(
        "venue_present",
        (),
        lambda df: df["venue"].fillna("").str.len() > 0,
        lambda r: f"the file header names no venue (label {r['header_label']!r})",
    ),
)
CHECKS_BY_NAME = {c.name: c for c in RECORD_CHECKS}
_registered: set[str] = set()
_registering = threading.Lock()  # threads of one process (Dask workers in threads) register once


def register_with_pandera() -> None:
    """Register every record check as a pandera check method, so failures carry its name."""
    with _registering:
        for check in RECORD_CHECKS:
            if check.name in _registered:
                continue
            extensions.register_check_method(statistics=list(check.params), supported_types=pd.DataFrame)(
                _as_method(check)
            )
            _registered.add(check.name)


def _as_method(check: RecordCheck):
    """A function whose signature names the check's statistics, as pandera requires."""
    import inspect

    def method(df: pd.DataFrame, **params) -> pd.Series:
        return check.passes(df, **params)

    kw = [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in check.params]
    method.__signature__ = inspect.Signature(
        [inspect.Parameter("df", inspect.Parameter.POSITIONAL_OR_KEYWORD), *kw]
    )
    method.__name__ = check.name
    return method
