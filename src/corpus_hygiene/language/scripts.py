"""Writing systems, declared once: the letters of each script langdetect's languages are written in,
the languages each script decides, and the character classes the tokenisers use."""

from __future__ import annotations

from bisect import bisect_right

# Letters per script, as (first, last) code points. Han includes the compatibility block and
# extensions A–F; Hangul its Jamo and syllables.
SCRIPT_RANGES = {
    "hangul": ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7AF), (0xD7B0, 0xD7FF)),
    "kana": ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F)),
    "han": ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F)),
    "latin": ((0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F), (0x1E00, 0x1EFF)),
    "cyrillic": ((0x400, 0x52F),),
    "greek": ((0x370, 0x3FF), (0x1F00, 0x1FFF)),
    "hebrew": ((0x590, 0x5FF),),
    "arabic": ((0x600, 0x6FF), (0x750, 0x77F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)),
    "devanagari": ((0x900, 0x97F),),
    "bengali": ((0x980, 0x9FF),),
    "gurmukhi": ((0xA00, 0xA7F),),
    "gujarati": ((0xA80, 0xAFF),),
    "tamil": ((0xB80, 0xBFF),),
    "telugu": ((0xC00, 0xC7F),),
    "kannada": ((0xC80, 0xCFF),),
    "malayalam": ((0xD00, 0xD7F),),
    "thai": ((0xE00, 0xE7F),),
}
OTHER = "other"  # letters of a script not listed above
SCRIPTS = (*SCRIPT_RANGES, OTHER)
CJK_SCRIPTS = ("hangul", "kana", "han")
SINGLE_LANGUAGE_SCRIPT = {
    "greek": "el",
    "hebrew": "he",
    "thai": "th",
    "bengali": "bn",
    "gurmukhi": "pa",
    "gujarati": "gu",
    "tamil": "ta",
    "telugu": "te",
    "kannada": "kn",
    "malayalam": "ml",
}
SHARED_SCRIPT = {  # script → (languages langdetect may choose, fallback)
    "cyrillic": ({"ru", "uk", "bg", "mk"}, "ru"),
    "arabic": ({"ar", "fa", "ur"}, "ar"),
    "devanagari": ({"hi", "mr", "ne"}, "hi"),
}
# langdetect's Latin-script languages, and the wordfreq list of those wordfreq has.
LATIN_LANGUAGES = frozenset(
    "af ca cs cy da de en es et fi fr hr hu id it lt lv nl no pl pt ro sk sl so sq sv sw tl tr vi".split()
)
# Languages whose words are single characters (Chinese, Japanese; Korean syllable blocks count alike in
# the dedup tokenisers): the near-duplicate search compares them by character shingles.
CJK_LANGS = frozenset({"zh", "ja", "ko"})
# Chinese, Japanese and Thai count characters as words, a Korean word is a few syllable blocks, and in
# the Indic scripts a character is a consonant or a vowel sign: a mean word length in characters says
# nothing about them (on the UDHR: Hindi words 2.6 letters without their signs, Malayalam 12.9 with).
CHARACTER_WORD_LANGUAGES = tuple("zh ja ko th hi mr ne bn pa gu ta te kn ml".split())
# Vietnamese writes a syllable a word, Persian and Urdu leave short vowels unwritten: their prose goes
# below the mean word length other languages keep (tests/test_checks.py reads their UDHR lines).
SHORT_WORD_LANGUAGES = ("vi", "fa", "ur")


def char_class(*scripts: str, bmp: bool = True) -> str:
    """The body of a regex ``[...]`` class holding the scripts' letters; with ``bmp``, their ranges below
    U+10000 only (sre tests a class that reaches past U+FFFF range by range, a BMP one by bitmap)."""
    ranges = sorted(r for s in scripts for r in SCRIPT_RANGES[s] if not bmp or r[1] <= 0xFFFF)
    return "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in ranges)


# One CJK character is one word for the dedup tokenisers and the report's word diff.
CJK_CHARS = char_class("kana", "han", "hangul")


def _script_table() -> tuple[list[int], list[str | None]]:
    """Sorted range starts and the script from each start on (None between ranges)."""
    bounds = sorted((lo, hi, name) for name, ranges in SCRIPT_RANGES.items() for lo, hi in ranges)
    starts, names = [], []
    for lo, hi, name in bounds:
        starts += [lo, hi + 1]
        names += [name, None]
    return starts, names


_STARTS, _NAMES = _script_table()


class _ScriptOf(dict):
    """Code point → the one-character name of its script (``str.translate`` table, filled as met):
    letters of an unlisted script → OTHER; anything not a letter is deleted."""

    def __missing__(self, code: int) -> str | None:
        at = bisect_right(_STARTS, code) - 1
        name = _NAMES[at] if at >= 0 else None
        if name is None and chr(code).isalpha():
            name = OTHER
        self[code] = value = None if name is None else chr(SCRIPTS.index(name) + 0x41)
        return value


_SCRIPT_OF = _ScriptOf()


def script_counts(text: str) -> dict[str, int]:
    """Letters of ``text`` per script (every name of ``SCRIPTS``): one pass maps each letter to its
    script's one-character name, then ``str.count`` (C speed) counts each name."""
    letters = text.translate(_SCRIPT_OF)
    return {name: letters.count(chr(i + 0x41)) for i, name in enumerate(SCRIPTS)}
