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


OVERSIZED_KEPT = 1000  # characters of an oversized paragraph kept (its quarantine row's text_raw)


class LongLine(str):
    """The start of a line too long to hold, with its full length (``iter_lines`` with a limit)."""

    length: int


def paragraphs_from(lines: Iterable[str], index: int, max_chars: int | None = None) -> Iterator[Paragraph]:
    """Paragraphs of ``lines``, whose first item is line ``index + 1`` of the file (any iterable). With
    ``max_chars``, a paragraph longer than that keeps only its first ``OVERSIZED_KEPT`` characters and
    its length (``n_chars``): its lines are counted, not held."""
    block: list[str] = []
    first, size, over = index, 0, False
    for i, line in enumerate(lines, index):
        if is_blank(line):
            if block:
                yield _paragraph(first, block, size, over)
                block, size, over = [], 0, False
            continue
        if not block:
            first = i
        size += getattr(line, "length", len(line)) + (1 if block else 0)
        if not over:
            block.append(line)
            if max_chars is not None and size > max_chars:  # from now on only its start is held
                block, over = ["\n".join(block)[:OVERSIZED_KEPT]], True
        elif len(block[0]) < OVERSIZED_KEPT:
            block[0] = f"{block[0]}\n{line[:OVERSIZED_KEPT]}"[:OVERSIZED_KEPT]
    if block:
        yield _paragraph(first, block, size, over)


def _paragraph(first: int, block: list[str], size: int, over: bool) -> Paragraph:
    text = "\n".join(block)
    return (
        Paragraph(line=first + 1, text=text, n_chars=size) if over else Paragraph(line=first + 1, text=text)
    )


def first_nonblank(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if not is_blank(line):
            return i
    return None
