"""Text → lines → header line + paragraphs, with exact 1-based line numbers.

Lines are split on "\\n", "\\r\\n" and "\\r" only. ``str.splitlines()`` also splits on form feed,
U+2028, U+0085 and others, which would shift every ``source_line`` after such a character (the
contract's line numbers must match what ``wc -l``-style tools and editors show).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import islice

from corpus_hygiene.models import Paragraph

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# A line is blank when it holds nothing but whitespace and invisible format characters.
_BLANK = re.compile(r"[\s\u200b-\u200d\u2060\ufeff]*")


def split_lines(text: str) -> list[str]:
    """Split on LF, CRLF and CR only.

    >>> split_lines("a\\r\\nb\\rc\\nd\\u2028e")
    ['a', 'b', 'c', 'd\\u2028e']
    """
    return _LINE_BREAK.split(text)


def is_blank(line: str) -> bool:
    return _BLANK.fullmatch(line) is not None


def iter_paragraphs(lines: Iterable[str], start: int = 0) -> Iterator[Paragraph]:
    """Groups of consecutive non-blank lines from ``lines[start:]``; ``line`` is 1-based."""
    return paragraphs_from(islice(lines, start, None), start)


def paragraphs_from(lines: Iterable[str], index: int) -> Iterator[Paragraph]:
    """Paragraphs of ``lines``, whose first item is line ``index + 1`` of the file (any iterable)."""
    block: list[str] = []
    first = index
    for i, line in enumerate(lines, index):
        if is_blank(line):
            if block:
                yield Paragraph(line=first + 1, text="\n".join(block))
                block = []
        else:
            if not block:
                first = i
            block.append(line)
    if block:
        yield Paragraph(line=first + 1, text="\n".join(block))


def first_nonblank(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if not is_blank(line):
            return i
    return None
