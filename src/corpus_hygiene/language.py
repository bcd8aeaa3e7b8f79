"""Language identification: the script decides where it can, a statistical model decides the rest.

langdetect alone is wrong on short and CJK text ("论文列表" → ko, "ICLR 2026 Papers" → id), and is
random unless seeded. So, in order:
1. Hangul → ko; kana → ja; Han without kana → zh, unless its characters are Japanese-only kanji forms
   (覧, 図, 変 … exist in Shift-JIS but in neither GB2312 nor Big5) → ja.
2. Greek, Hebrew, Thai and other single-language scripts decide alone.
3. Cyrillic, Arabic and Devanagari scripts are shared by several languages: langdetect chooses among
   that script's languages, and falls back to the script's main language.
4. Latin script: short text (a header label) is scored with wordfreq's word lists; longer text goes
   to langdetect (seeded, on a bounded prefix).
Codes are ISO 639-1; "und" when there is too little text to tell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

UNDETERMINED = "und"

# Letters per script. Han includes the CJK compatibility block and extension A/B.
_SCRIPTS = {
    "hangul": r"\u1100-\u11ff\u3130-\u318f\uac00-\ud7af",
    "kana": r"\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f",
    "han": r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f",
    "cyrillic": r"\u0400-\u052f",
    "greek": r"\u0370-\u03ff\u1f00-\u1fff",
    "arabic": r"\u0600-\u06ff\u0750-\u077f",
    "hebrew": r"\u0590-\u05ff",
    "thai": r"\u0e00-\u0e7f",
    "devanagari": r"\u0900-\u097f",
    "latin": r"A-Za-z\u00c0-\u024f\u1e00-\u1eff",
}
_SCRIPT_RE = {name: re.compile(f"[{ranges}]") for name, ranges in _SCRIPTS.items()}
_SINGLE_LANGUAGE_SCRIPT = {"greek": "el", "hebrew": "he", "thai": "th"}
_SHARED_SCRIPT = {  # script → (languages langdetect may choose, fallback)
    "cyrillic": ({"ru", "uk", "bg", "mk", "sr"}, "ru"),
    "arabic": ({"ar", "fa", "ur"}, "ar"),
    "devanagari": ({"hi", "mr", "ne"}, "hi"),
}
# Languages wordfreq scores short Latin-script text against.
_SHORT_TEXT_LANGS = ("en", "fr", "de", "es", "pt", "it", "nl", "pl", "sv", "id", "tr", "vi", "cs", "ro")
_WORD = re.compile(r"[^\W\d_]+")

MIN_LETTERS = 3  # below this nothing is decided: "und"
SHORT_TEXT_LETTERS = 40  # Latin text shorter than this is scored with word lists
PREFIX_CHARS = 300  # langdetect reads at most this many characters (cost is mostly per call)
SCRIPT_CHARS = 1000  # the script decision reads this many: plenty to tell scripts apart
LANGDETECT_SEED = 0
# langdetect averages 7 random trials by default; on the real abstracts of benchmarks/corpora.py one
# trial on a 300-character prefix is as accurate, at a fraction of the cost, and shorter prefixes lose
# accuracy (benchmarks/bench_dedup.py re-measures it). The seed makes the single trial deterministic.
LANGDETECT_TRIALS = 1


@dataclass(frozen=True, slots=True)
class Language:
    code: str
    confidence: float
    method: str  # "script", "kanji_forms", "wordfreq", "langdetect", "none"


def script_counts(text: str) -> dict[str, int]:
    return {name: len(rx.findall(text)) for name, rx in _SCRIPT_RE.items()}


@lru_cache(maxsize=65536)
def _han_form(ch: str) -> int:
    """+1 for a Japanese-only kanji form, -1 for a Chinese-only hanzi form, 0 for shared."""

    def enc(codec: str) -> bool:
        try:
            ch.encode(codec)
            return True
        except UnicodeEncodeError:
            return False

    in_ja = enc("cp932")
    in_zh = enc("gb2312") or enc("big5")
    return 1 if in_ja and not in_zh else -1 if in_zh and not in_ja else 0


def _han_language(text: str, han: int) -> Language:
    forms = sum(_han_form(ch) for ch in _SCRIPT_RE["han"].findall(text))
    if forms > 0:
        return Language("ja", round(min(1.0, 0.5 + forms / han), 3), "kanji_forms")
    return Language("zh", 1.0 if forms < 0 else 0.9, "script")


def _langdetect(text: str) -> list[tuple[str, float]]:
    from langdetect.lang_detect_exception import LangDetectException

    from corpus_hygiene import langdetect_arrays

    detector = langdetect_arrays.ArrayDetector(LANGDETECT_SEED)
    detector.n_trial = LANGDETECT_TRIALS
    prefix = text[:PREFIX_CHARS]
    # langdetect's profiles are of ordinary case: text in capitals reads as German to it
    detector.append(prefix.lower() if prefix.isupper() else prefix)
    try:
        probs = detector.get_probabilities()
    except LangDetectException:
        return []
    return [(p.lang.split("-")[0], p.prob) for p in probs]


def _wordfreq(text: str) -> Language:
    from corpus_hygiene.wordlists import zipf

    words = [w.lower() for w in _WORD.findall(text)]
    if not words:
        return Language(UNDETERMINED, 0.0, "none")
    # The "small" lists (common words) are enough for labels, and load in a fraction of the time of
    # the default "best" lists.
    scores = {lang: sum(zipf(w, lang, "small") for w in words) / len(words) for lang in _SHORT_TEXT_LANGS}
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    (best, top), (_, second) = ranked[0], ranked[1]
    if top < 2.0:  # not common words in any language we know
        return Language(UNDETERMINED, 0.0, "wordfreq")
    return Language(best, round(min(1.0, 0.5 + (top - second) / 4), 3), "wordfreq")


def detect_language(text: str) -> Language:
    """Return the language of ``text``.

    >>> detect_language("ICLR 2026 论文列表").code
    'zh'
    >>> detect_language("論文一覧").code
    'ja'
    >>> detect_language("Liste des articles").code
    'fr'
    >>> detect_language("WE SHOW THAT THE MODEL LEARNS THE TASK FROM A FEW EXAMPLES.").code
    'en'
    """
    counts = script_counts(text[:SCRIPT_CHARS])
    letters = sum(counts.values())
    if letters < MIN_LETTERS and not (counts["han"] or counts["kana"] or counts["hangul"]):
        return Language(UNDETERMINED, 0.0, "none")
    cjk = counts["hangul"] + counts["kana"] + counts["han"]
    if cjk and cjk * 4 >= letters - cjk:  # one CJK character weighs about as much as a short word
        if counts["hangul"] >= max(1, counts["kana"], counts["han"] // 4):
            return Language("ko", round(counts["hangul"] / cjk, 3), "script")
        if counts["kana"]:
            return Language("ja", round(min(1.0, 0.9 + counts["kana"] / cjk), 3), "script")
        return _han_language(text, counts["han"])
    script = max((s for s in counts if s not in ("hangul", "kana", "han")), key=lambda s: counts[s])
    share = round(counts[script] / letters, 3)
    if script in _SINGLE_LANGUAGE_SCRIPT:
        return Language(_SINGLE_LANGUAGE_SCRIPT[script], share, "script")
    if script in _SHARED_SCRIPT:
        allowed, fallback = _SHARED_SCRIPT[script]
        for lang, prob in _langdetect(text):
            if lang in allowed:
                return Language(lang, round(prob, 3), "langdetect")
        return Language(fallback, share * 0.5, "script")
    if counts["latin"] < SHORT_TEXT_LETTERS:
        return _wordfreq(text)
    ranked = _langdetect(text)
    if not ranked:
        return Language(UNDETERMINED, 0.0, "langdetect")
    lang, prob = ranked[0]
    return Language(lang, round(prob, 3), "langdetect")
