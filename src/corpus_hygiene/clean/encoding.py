"""Encoding repair with ftfy: mojibake of every family ftfy repairs, HTML entities, controls, ligatures.

What this wrapper adds to ``ftfy.fix_and_explain``:
- a configuration chosen for stored text: curly quotes, dashes and full-width CJK punctuation are
  correct Unicode and stay as authored (``uncurl_quotes=False``, ``fix_character_width=False``);
  line breaks and NFC are left to the normalisation stage;
- a fast path: ftfy only runs when the text holds something it could fix: a UTF-8 sequence as one of
  the single-byte encodings ftfy repairs shows it (cp1252, Latin-1, cp1250/Latin-2, cp1251, cp1253,
  cp1254, cp1257, MacRoman, cp437; doubly encoded text too), an HTML entity, a ligature, a control
  character or a surrogate. ftfy's own ``is_bad`` costs as much as fixing, so the gate is this exact
  byte-level test (``may_need_encoding_repair``);
- ftfy's explanation is mapped to our fix names (``mojibake``, ``html_entities``, ``ligatures``,
  ``c1_controls``).
"""

from __future__ import annotations

import re

import ftfy
from ftfy.badness import BADNESS_RE
from ftfy.chardata import CHARMAP_ENCODINGS, CONTROL_CHARS, HTML_ENTITY_RE, LIGATURES

_CONFIG = ftfy.TextFixerConfig(
    unescape_html="auto",
    remove_terminal_escapes=True,
    fix_encoding=True,
    restore_byte_a0=True,
    replace_lossy_sequences=True,
    decode_inconsistent_utf8=True,
    fix_c1_controls=True,
    fix_latin_ligatures=True,
    fix_character_width=False,  # would turn full-width CJK punctuation "，" into ","
    uncurl_quotes=False,  # curly quotes are what the author wrote
    fix_line_breaks=False,  # paragraph line breaks are handled by normalisation
    fix_surrogates=True,
    remove_control_chars=True,
    normalization=None,  # NFC happens once, in normalisation
    explain=True,
)


def _utf8_byte_roles() -> tuple[dict[str, tuple[int, int, int]], dict[str, int], dict[str, int]]:
    """For each character, a bit per encoding ftfy repairs from (``CHARMAP_ENCODINGS``): in which ones it
    is a byte that starts a UTF-8 sequence of 1, 2 or 3 continuation bytes, and in which a continuation
    byte. A '?' or U+FFFD can stand for a lost continuation byte in ftfy's sloppy encodings; a space
    for a 0xA0 turned into a space after the start bytes ftfy's ``restore_byte_a0`` knows (not MacRoman):
    the third map."""
    lead: dict[str, list[int]] = {}
    cont: dict[str, int] = {}
    space_after: dict[str, int] = {}
    for bit, encoding in enumerate(CHARMAP_ENCODINGS):
        flag = 1 << bit
        for byte in range(0x80, 0xF5):
            ch = bytes([byte]).decode(encoding)
            if byte < 0xC0:
                cont[ch] = cont.get(ch, 0) | flag
            elif byte >= 0xC2:
                lead.setdefault(ch, [0, 0, 0])[0 if byte < 0xE0 else 1 if byte < 0xF0 else 2] |= flag
            if encoding != "macroman" and byte in b"\xc2\xc3\xc5\xce\xd0\xd9\xe0\xe1\xe2\xe3\xf0":
                space_after[ch] = space_after.get(ch, 0) | flag
        for ch in ("?", "\ufffd") if encoding.startswith("sloppy") else ():
            cont[ch] = cont.get(ch, 0) | flag
    return {ch: (a, b, c) for ch, (a, b, c) in lead.items()}, cont, space_after


_LEAD, _CONT, _SPACE_AFTER = _utf8_byte_roles()
_CANDIDATE = re.compile(f"[{re.escape(''.join(_LEAD))}](?=[ {re.escape(''.join(_CONT))}])")
# What ftfy's other fixers act on: HTML entities (its own pattern: "&frac14;", "&sup2;"), ligatures, C1
# and other control characters, surrogates, terminal escapes.
_OTHER_FIXES = re.compile(
    HTML_ENTITY_RE.pattern
    + f"|[{re.escape(''.join(map(chr, LIGATURES)))}]"
    + "|[\u0080-\u009f\ud800-\udfff]"
    + f"|[{re.escape(''.join(map(chr, CONTROL_CHARS)))}]"
)


def _has_utf8_sequence(text: str) -> bool:
    """``text`` holds characters that, encoded back in one of ftfy's encodings, are a UTF-8 sequence (a
    start byte and its continuation bytes, all in that encoding) where ftfy's badness measure sees
    mojibake: only there can ftfy's encoding fix apply. The measure runs on a few characters around
    each sequence, not on the whole text: it is the costly part of ``is_bad``."""
    for found in _CANDIDATE.finditer(text):
        at = found.start()
        for n, bits in enumerate(_LEAD[text[at]], start=1):
            for ch in text[at + 1 : at + 1 + n] if bits else ():
                bits &= _SPACE_AFTER.get(text[at], 0) if ch == " " else _CONT.get(ch, 0)
            if bits and at + n < len(text) and BADNESS_RE.search(text, max(0, at - 3), at + n + 4):
                return True
    return False


_STEP_NAMES = {
    "decode_inconsistent_utf8": "mojibake",
    "restore_byte_a0": "mojibake",
    "replace_lossy_sequences": "mojibake",
    "unescape_html": "html_entities",
    "fix_latin_ligatures": "ligatures",
    "fix_c1_controls": "c1_controls",
    "remove_control_chars": "control_chars",
    "remove_terminal_escapes": "terminal_escapes",
    "fix_surrogates": "surrogates",
}


def may_need_encoding_repair(text: str) -> bool:
    """ftfy could change ``text``: it is mojibake of UTF-8 in some family ftfy repairs, or holds what
    ftfy's other fixers act on. Cheap where ftfy's own ``is_bad`` is not (it tries ~40 patterns at every
    position); every text ``is_bad`` sends to the encoding fix passes here (tests/test_clean.py)."""
    return _OTHER_FIXES.search(text) is not None or (not text.isascii() and _has_utf8_sequence(text))


def repair_encoding(text: str) -> tuple[str, tuple[str, ...]]:
    """Return the repaired text and the names of the repairs made, in order.

    >>> repair_encoding("CBTâ€™s naÃ¯ve “model”")
    ('CBT’s naïve “model”', ('mojibake',))
    >>> repair_encoding("R&amp;D on the ﬁrst try")
    ('R&D on the first try', ('html_entities', 'ligatures'))
    """
    if not may_need_encoding_repair(text):
        return text, ()
    fixed, explanation = ftfy.fix_and_explain(text, config=_CONFIG)
    if fixed == text or explanation is None:
        return text, ()
    names: list[str] = []
    steps = list(explanation)
    if steps[:2] == [("encode", "latin-1"), ("decode", "windows-1252")]:
        names.append("c1_controls")  # C1 controls read as the cp1252 characters they were meant as
        steps = steps[2:]
    for step, arg in steps:
        name = _STEP_NAMES.get(arg, arg) if step == "apply" else "mojibake"
        if name not in names:
            names.append(name)
    return fixed, tuple(names)
