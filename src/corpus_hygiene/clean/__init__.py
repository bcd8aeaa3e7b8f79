"""Text cleaning: a fixed sequence of named fixes, each recorded in ``fixes`` when it changes the text.

Order (each step relies on the ones before it):
1. encoding   ftfy: mojibake, HTML entities, C1 controls, ligatures (must see the text as decoded)
2. latex      LaTeX → Unicode, math included; literal $, %, & kept
3. markdown   emphasis markers removed (after LaTeX, so ``$x_i$`` is never read as emphasis)
4. pdf        soft hyphens, words split at line ends, letter-spaced words (needs the language)
5. normalise  NFC, invisible characters removed, whitespace collapsed (last: earlier steps see the
              original line breaks)
Then the loss guard (``loss.lost_words``): words of the repaired text that steps 2–5 removed although
they were not markup are kept in ``Cleaned.lost`` and flagged with ``dropped_text`` in ``fixes``.
"""

from __future__ import annotations

import re
import unicodedata

from corpus_hygiene.clean.encoding import may_need_encoding_repair, repair_encoding
from corpus_hygiene.clean.latex.text_mode import latex_to_unicode, may_contain_latex, prints_markup_as_typed
from corpus_hygiene.clean.loss import lost_words
from corpus_hygiene.clean.markdown import strip_emphasis
from corpus_hygiene.clean.normalise import collapse_whitespace, remove_invisible_chars, to_nfc
from corpus_hygiene.clean.pdf import join_letter_spacing, join_split_words, remove_soft_hyphens
from corpus_hygiene.isolation import step
from corpus_hygiene.models import Cleaned

# The steps that delete or join characters of words; the others change code points or spaces only.
_MAY_REMOVE_WORDS = frozenset(("latex", "markdown", "soft_hyphens", "dehyphenation", "letter_spacing"))
_MARKUP_LEFT = re.compile(r"[\\$`*_~]|--|''")
# What a step after encoding repair may act on (a superset): markup characters, a soft hyphen, whitespace
# other than the space, invisible characters (as normalise.py has them), and below, in ``_settled``: dashes,
# quotes, double spaces, a hyphen before a space, single letters spaced apart.
_OTHER_SPACES = "".join(c for c in map(chr, range(0x3001)) if c.isspace() and c != " ")  # all below U+3001
_MAY_NEED_A_STEP = re.compile(
    f"[{re.escape(_OTHER_SPACES)}\\\\$`*_~\u00ad\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)
_SPACED_LETTERS = re.compile(r" [^\W\d_] [^\W\d_] ")


def clean_text(text: str, lang: str | None = "en", *, repairs: tuple[str, ...] | None = None) -> Cleaned:
    r"""Run every fix in order; ``fixes`` names those that changed the text.

    ``lang`` (ISO 639-1) chooses the word list for joining split words. ``repairs``: what the caller's
    ``repair_encoding`` made of ``text`` (the per-file stage runs it before language detection), so the
    first pass does not run it again; most texts then need no step at all (``_settled``).

    >>> clean_text("We intro- duce \\textbf{CBT}â€™s  model").text
    'We introduce CBT’s model'
    >>> clean_text("We intro- duce \\textbf{CBT}â€™s  model").fixes
    ('mojibake', 'latex', 'dehyphenation', 'whitespace')
    """
    if repairs is not None and _settled(text, repairs):
        return Cleaned(text=text, fixes=repairs)
    cleaned, repaired = _clean_once(text, lang, encoding=repairs is None)
    cleaned = Cleaned(text=cleaned.text, fixes=(repairs or ()) + cleaned.fixes)
    # Malformed markup can turn into new markup ("$\\{" → "${", "_`_`" → "``"), and removing a
    # control character can complete a mojibake sequence. Where such characters are left, run
    # again until nothing changes, so cleaning is idempotent; clean text rarely has any. Verbatim
    # content is LaTeX printed as typed: it is converted once (the one exception to idempotence).
    for _ in range(3):
        if not (_MARKUP_LEFT.search(cleaned.text) or may_need_encoding_repair(cleaned.text)):
            break
        again, _ = _clean_once(cleaned.text, lang, _STEPS[1:] if prints_markup_as_typed(text) else _STEPS)
        if again.text == cleaned.text:
            break
        fixes = cleaned.fixes + tuple(f for f in again.fixes if f not in cleaned.fixes)
        cleaned = Cleaned(text=again.text, fixes=fixes)
    with step("loss_guard"):
        lost = lost_words(repaired, cleaned.text) if _MAY_REMOVE_WORDS.intersection(cleaned.fixes) else ()
    if lost:
        return Cleaned(text=cleaned.text, fixes=(*cleaned.fixes, "dropped_text"), lost=lost)
    return cleaned


def _settled(text: str, repairs: tuple[str, ...]) -> bool:
    """No step would change ``text`` (``repair_encoding``'s output, with ``repairs``), nor a second pass.
    Unrepaired text goes through ftfy again only to the same answer, so only repaired text is checked."""
    if _MAY_NEED_A_STEP.search(text) or "--" in text or "''" in text or "  " in text or "- " in text:
        return False
    if text[:1] == " " or text[-1:] == " " or _SPACED_LETTERS.search(" " + text):
        return False
    return unicodedata.is_normalized("NFC", text) and not (repairs and may_need_encoding_repair(text))


def _latex(text: str, lang: str | None) -> str:
    return latex_to_unicode(text) if may_contain_latex(text) else text


# The fixed sequence after encoding repair: (fix name, function of text and language).
_STEPS = (
    ("latex", _latex),
    ("markdown", lambda text, lang: strip_emphasis(text)),
    ("soft_hyphens", lambda text, lang: remove_soft_hyphens(text)),
    ("dehyphenation", join_split_words),
    ("letter_spacing", join_letter_spacing),
    ("unicode_nfc", lambda text, lang: to_nfc(text)),
    ("invisible_chars", lambda text, lang: remove_invisible_chars(text)),
    ("whitespace", lambda text, lang: collapse_whitespace(text)),
)


def _clean_once(text: str, lang: str | None, steps=None, encoding: bool = True) -> tuple[Cleaned, str]:
    """The cleaned text, and the text after encoding repair (what the loss guard compares with)."""
    repairs = ()
    if encoding:
        with step("encoding"):
            text, repairs = repair_encoding(text)
    fixes = list(repairs)
    repaired = text
    for name, fix in steps or _STEPS:
        with step(name):
            fixed = fix(text, lang)
        if fixed != text:
            fixes.append(name)
            text = fixed
    return Cleaned(text=text, fixes=tuple(fixes)), repaired
