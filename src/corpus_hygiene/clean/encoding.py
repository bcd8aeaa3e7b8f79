"""Encoding repair with ftfy: mojibake, HTML entities, C1 controls, Latin ligatures.

What this wrapper adds to ``ftfy.fix_and_explain``:
- a configuration chosen for stored text: curly quotes, dashes and full-width CJK punctuation are
  correct Unicode and stay as authored (``uncurl_quotes=False``, ``fix_character_width=False``);
  line breaks and NFC are left to the normalisation stage;
- a fast path: ftfy only runs when the text contains something it could fix (a mojibake signature,
  an HTML entity, a ligature, a C1 control or a surrogate). ftfy's own ``is_bad`` costs as much as
  fixing, so the gate is a regular expression;
- ftfy's explanation is mapped to our fix names (``mojibake``, ``html_entities``, ``ligatures``,
  ``c1_controls``).
"""

from __future__ import annotations

import re

import ftfy

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

# UTF-8 read as cp1252/latin-1: a lead byte character (Â..ô) followed by a continuation-byte
# character (U+0080..U+00BF or the cp1252 specials that bytes 0x80..0x9F map to).
_CONTINUATION = "\u0080-\u00bf" + bytes(range(0x80, 0xA0)).decode("cp1252", errors="ignore")
_MAY_NEED_FTFY = re.compile(
    f"[\u00c2-\u00f4][{_CONTINUATION}]"  # mojibake signature
    r"|&(?:[A-Za-z]{2,8}|#\d{2,7}|#x[0-9A-Fa-f]{2,6});"  # HTML entity
    "|[\ufb00-\ufb06]"  # Latin ligatures
    "|[\u0080-\u009f]"  # C1 controls
    "|[\ud800-\udfff]"  # surrogates
    "|\x1b\\["  # terminal escapes
)

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
    return _MAY_NEED_FTFY.search(text) is not None


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
