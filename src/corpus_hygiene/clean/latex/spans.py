"""Where math is in a text, and what LaTeX is left in a cleaned one."""

from __future__ import annotations

import re

from corpus_hygiene.clean.latex.arguments import environment_end, escaped
from corpus_hygiene.clean.latex.markup import MATH_ENVIRONMENTS

# ---- math spans -------------------------------------------------------------------------------
_PROSE = re.compile(r"(?:\b[^\W\d_]{2,}\b\s+){3,}")
_MATHY = re.compile(r"[\\^_{}=<>|]")
_BEGIN = re.compile(r"\\begin\s*\{([A-Za-z]+\*?)\}")


def find_math_spans(text: str) -> list[tuple[int, int, str]]:
    r"""(start, end, content) of every math span: ``$…$`` by the rule below, ``$$…$$``, ``\(…\)``,
    ``\[…\]``, and the math environments (their content is the whole ``\begin…\end``).

    A ``$`` opens inline math when it is not escaped and the next character is not a space; the span
    closes at the *next* unescaped ``$``, which must follow a non-space character and must not be
    followed by a digit. If the next ``$`` cannot close, the opener was a literal dollar (a ``$`` can
    never appear inside inline math). Prose between the two (three words, or a space after an amount:
    "$2 and US$ 3") is no math unless it holds a math character (``\ ^ _ { } = < > |``). The
    ``no_latex_residue`` check asks the same function (``latex_residue``).

    >>> [c for _, _, c in find_math_spans(r"priced at $10 per hour, with $\alpha$-entmax")]
    ['\\alpha']
    >>> find_math_spans("paid between $20 and $50 per annotator")
    []
    """
    spans: list[tuple[int, int, str]] = []
    i = 0
    while (i := _next_special(text, i)) < len(text):
        span = _delimited_span(text, i) if text[i] == "\\" else _dollar_span(text, i)
        if span is not None:
            spans.append(span)
            i = span[1]
        else:
            i += 2 if text[i] == "\\" else 1  # an escaped character, or a literal dollar
    return spans


_SPECIAL = re.compile(r"[\\$]")


def _next_special(text: str, i: int) -> int:
    m = _SPECIAL.search(text, i)
    return m.start() if m else len(text)


def _delimited_span(text: str, i: int) -> tuple[int, int, str] | None:
    r"""The ``\(…\)``, ``\[…\]`` or math environment opened at ``text[i]`` (a backslash)."""
    if text[i + 1 : i + 2] in ("(", "["):
        close = "\\)" if text[i + 1] == "(" else "\\]"
        end = text.find(close, i + 2)
        if end != -1:
            return i, end + 2, text[i + 2 : end]
    begin = _BEGIN.match(text, i) if text.startswith("\\begin", i) else None
    if begin and begin.group(1).rstrip("*") in MATH_ENVIRONMENTS:
        _, end = environment_end(text, begin.end(), begin.group(1))
        return i, end, text[i:end]
    return None


def _dollar_span(text: str, i: int) -> tuple[int, int, str] | None:
    """The ``$$…$$`` or ``$…$`` span opened at ``text[i]``, by the rule of ``find_math_spans``."""
    n = len(text)
    if text.startswith("$$", i):
        end = text.find("$$", i + 2)
        if end != -1 and end > i + 2:
            return i, end + 2, text[i + 2 : end]
    j = text.find("$", i + 1)
    while j != -1 and escaped(text, j):
        j = text.find("$", j + 1)
    content = text[i + 1 : j] if j != -1 else ""
    opens = i + 1 < n and not text[i + 1].isspace()
    currency_like = content[:1].isdigit()
    closes = (
        j != -1 and not text[j - 1].isspace() and not (currency_like and j + 1 < n and text[j + 1].isdigit())
    )
    # prose between two dollars ("$2 and US$ 3", "$10 to $20") is not math unless it has math in it
    prose = _PROSE.search(content) or (currency_like and any(c.isspace() for c in content))
    if opens and closes and content and not (prose and not _MATHY.search(content)):
        return i, j + 1, content
    return None


_LEFT_COMMAND = re.compile(r"\\[A-Za-z]+|\\[%&${}]")


def latex_residue(text: str) -> str:
    """The first piece of LaTeX in ``text`` ("" when there is none): a ``\\command``, an escaped
    character, or a math span as ``find_math_spans`` reads it. A ``$`` the cleaner keeps as a literal
    is, by the same rule, never residue.

    >>> latex_residue("costs $3 and $4 per million tokens"), latex_residue("a $x_i$ term")
    ('', '$x_i$')
    """
    found = _LEFT_COMMAND.search(text)
    if found:
        return found.group(0)
    if "$" in text or "\\" in text:
        for start, end, _ in find_math_spans(text):
            return text[start:end]
    return ""
