"""Markdown emphasis → plain text, by CommonMark's flanking rules (what a renderer would show).

``**bold**``, ``__bold__``, ``*em*`` and ``_em_`` lose their markers. Not touched: ``snake_case``
(underscore emphasis never starts or ends inside a word); ``2*3*4`` and ``x**2 + y**2`` (``*``
emphasis may touch a word on one side, as in ``**M**asked``, but not on both); ``a * b`` (a marker
followed by a space opens nothing); footnote asterisks with no partner ("Alice* and Bob*"); URLs.
"""

from __future__ import annotations

import re

_URL = re.compile(r"https?://\S+|www\.\S+")
# A run of markers opens when followed by non-space, closes when preceded by non-space; the text
# between does not start or end with a space. Underscores must not touch a letter or digit outside.
# An emphasised span is at most MAX_SPAN characters: an opener without a closer then costs a bounded
# scan, and a paragraph of thousands of unmatched markers is cleaned in linear time.
MAX_SPAN = 300
_SPAN = f"(.{{1,{MAX_SPAN}}}?)"
_STRONG_STAR = re.compile(r"(?<!\*)\*\*(?=\S)" + _SPAN + r"(?<=\S)\*\*(?!\*)")
_STRONG_UNDER = re.compile(r"(?<![\w_])__(?=\S)" + _SPAN + r"(?<=\S)__(?![\w_])")
_EM_STAR = re.compile(r"(?<![*\\])\*(?=[^\s*])" + _SPAN + r"(?<=[^\s*\\])\*(?!\*)")
_EM_UNDER = re.compile(r"(?<![\w_\\])_(?=[^\s_])" + _SPAN + r"(?<=[^\s_\\])_(?![\w_])")
_MAY_HAVE = re.compile(r"[*_]")


def _unless_inside_a_word(m: re.Match) -> str:
    text, start, end = m.string, m.start(), m.end()
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return m.group(0) if before.isalnum() and after.isalnum() else m.group(1)


def strip_emphasis(text: str) -> str:
    """Remove emphasis markers, keeping the emphasised text.

    >>> strip_emphasis("**Point-MoE** uses *state-clashing* and __x__ but keeps snake_case and a * b")
    'Point-MoE uses state-clashing and x but keeps snake_case and a * b'
    """
    if not _MAY_HAVE.search(text):
        return text
    urls: list[str] = []

    def protect(m: re.Match) -> str:
        urls.append(m.group(0))
        return f"\ue010{len(urls) - 1}\ue011"

    out = _URL.sub(protect, text)
    for pattern in (_STRONG_STAR, _EM_STAR):
        out = pattern.sub(_unless_inside_a_word, out)
    for pattern in (_STRONG_UNDER, _EM_UNDER):
        out = pattern.sub(r"\1", out)
    return re.sub("\ue010(\\d+)\ue011", lambda m: urls[int(m.group(1))], out)
