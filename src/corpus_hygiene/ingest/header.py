"""The header line: venue, year and a label in any language, in any order.

"ICLR 2026 Papers", "2025 AAAI accepted papers", "ICLR 2026 论文列表", "Статьи NeurIPS 2025".
A venue is a Latin-script acronym-like token with at least two capitals (ICLR, NeurIPS, AAAI, ACL);
a year is a standalone 4-digit number between 1950 and 2100. The label is what remains, and its
language comes from corpus_hygiene.language.detect (script first, so "论文列表" is zh, not langdetect's ko).
A first line without a year, or long enough to be prose, is not a header (a missing venue is
left for validation to report).
"""

from __future__ import annotations

import re

from corpus_hygiene.language.detect import UNDETERMINED, detect_language
from corpus_hygiene.models import Header

MAX_HEADER_CHARS = 200
MAX_HEADER_WORDS = 16
_YEAR = re.compile(r"(?<![\d.,])(19[5-9]\d|20\d\d|2100)(?![\d.,%]|\s*[%‰])")
# An acronym-like token: starts with a capital, has >= 2 capitals in all, Latin letters/digits/&/-.
_VENUE = re.compile(r"(?<![\w])((?=(?:[A-Za-z0-9&-]*[A-Z]){2})[A-Z][A-Za-z0-9&-]*[A-Za-z0-9])(?!\w)")
_DECORATION = re.compile(r"^[\s#*=>|:–—-]+|[\s#*=|:,;–—-]+$")
_SEPARATORS = re.compile(r"\s*[:：|–—]\s*|\s{2,}")


def parse_header(line: str, line_no: int) -> Header | None:
    """Parse a candidate header line; None when it is not a header.

    >>> h = parse_header("ICLR 2026 论文列表", 1)
    >>> (h.venue, h.year, h.label, h.label_lang)
    ('ICLR', 2026, '论文列表', 'zh')
    >>> parse_header("2025 AAAI accepted papers", 1).venue
    'AAAI'
    """
    text = _DECORATION.sub("", line.strip().lstrip("\ufeff"))  # "# ICLR 2026 Papers" is a header too
    if not text or len(text) > MAX_HEADER_CHARS or len(text.split()) > MAX_HEADER_WORDS:
        return None
    year_match = _YEAR.search(text)
    venue_match = _VENUE.search(text)
    if year_match is None:
        return None  # every header names its year; a first line without one is prose or junk
    if text.endswith((".", "。", "?", "!")) and len(text.split()) > 4:
        return None  # a sentence that happens to contain a year
    spans, venue = [year_match.span()], None
    if venue_match:
        start, stop = venue_match.span()
        if start < year_match.start() < stop:  # "ICLR-2026": the year is not part of the venue's name
            stop = year_match.start()
        venue = text[start:stop].rstrip("-") or None
        spans.append((start, stop))
    rest = text
    for start, end in sorted(spans, reverse=True):
        rest = rest[:start] + " " + rest[end:]
    label = _DECORATION.sub("", _SEPARATORS.sub(" ", rest)).strip()
    label = re.sub(r"\s+", " ", label)
    lang = detect_language(label).code if label else UNDETERMINED
    return Header(
        line=line_no, text=text, venue=venue, year=int(year_match.group(1)), label=label, label_lang=lang
    )
