"""Reading LaTeX as TeX reads it: a macro's arguments by its spec, an environment's extent, the macros
dropped with their arguments, and a table's rows and cells."""

from __future__ import annotations

import re
from functools import lru_cache

from pylatexenc.latexwalker import get_default_latex_context_db as get_walker_context_db

from corpus_hygiene.clean.latex.markup import ARGSPECS, DROPPED, TABLES

# ---- arguments ----------------------------------------------------------------------------------
MACRO = re.compile(r"\\([A-Za-z]+|.)", re.S)


def escaped(text: str, i: int) -> bool:
    backslashes = 0
    while i - 1 - backslashes >= 0 and text[i - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def skip_spaces(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t\n\r":
        i += 1
    return i


def _group_end(s: str, i: int, open_: str = "{", close: str = "}") -> int:
    """The index after the group opened at ``s[i]`` (the end of ``s`` when it never closes)."""
    depth = 0
    j = i
    while j < len(s):
        ch = s[j]
        if ch == "\\":
            j += 2
            continue
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(s)


def take_arg(s: str, i: int, with_args: bool = False) -> tuple[str, int]:
    """The argument starting at s[i] (after spaces): a {balanced group}, a \\macro (with its own
    arguments when ``with_args``: ``T_\\mathrm{max}``), or one character."""
    i = skip_spaces(s, i)
    if i >= len(s):
        return "", i
    if s[i] == "{":
        end = _group_end(s, i)
        return s[i + 1 : end - 1 if s[end - 1 : end] == "}" and end - 1 > i else end], end
    m = MACRO.match(s, i)
    if m:
        end = m.end()
        if with_args and m.group(1).isalpha():
            _, end = read_args(s, end, argspec(m.group(1)))
        return s[i:end], end
    return s[i], i + 1


def read_args(s: str, i: int, spec: str) -> tuple[list[str | None], int]:
    """The arguments ``spec`` describes, from ``s[i]``: "*" → "*" or None, "[" → its content or None,
    "{" → the argument (``take_arg``)."""
    found: list[str | None] = []
    for kind in spec:
        j = skip_spaces(s, i)
        if kind == "*":
            found.append("*" if s[j : j + 1] == "*" else None)
            i = j + 1 if found[-1] else i
        elif kind == "[":
            if s[j : j + 1] == "[":
                end = _group_end(s, j, "[", "]")
                found.append(s[j + 1 : end - 1])
                i = end
            else:
                found.append(None)
        else:
            arg, i = take_arg(s, i)
            found.append(arg)
    return found, i


@lru_cache(maxsize=4096)
def argspec(name: str) -> str:
    if name in ARGSPECS:
        return ARGSPECS[name]
    spec = get_walker_context_db().get_macro_spec(name)
    return getattr(getattr(spec, "args_parser", None), "argspec", "") if spec is not None else ""


_PARAMETERS = re.compile(r"[#\d\s]*")


def skip_definition(s: str, name: str, i: int) -> int:
    """After ``\\def`` or ``\\let``: the name defined, and its parameter text and body
    (``\\def\\x#1{…}``) or the macro it is let to (``\\let\\a=\\b``)."""
    m = MACRO.match(s, skip_spaces(s, i))
    if m is None:
        return i
    i = m.end()
    if name == "let":
        j = skip_spaces(s, i)
        j = skip_spaces(s, j + 1) if s[j : j + 1] == "=" else j
        return take_arg(s, j)[1]
    j = _PARAMETERS.match(s, i).end()
    return _group_end(s, j) if s[j : j + 1] == "{" else i


def environment_end(text: str, start: int, name: str) -> tuple[int, int]:
    """(where the body of ``\\begin{name}`` ends, the index after its ``\\end{name}``); the end of the
    text for both when it never ends. Nested environments of the same name are counted."""
    begin, end = f"\\begin{{{name}}}", f"\\end{{{name}}}"
    depth, i = 1, start
    while True:
        next_end = text.find(end, i)
        if next_end == -1:
            return len(text), len(text)
        next_begin = text.find(begin, i, next_end)
        if next_begin != -1:
            depth, i = depth + 1, next_begin + len(begin)
            continue
        depth -= 1
        if depth == 0:
            return next_end, next_end + len(end)
        i = next_end + len(end)


# ---- macros dropped with their arguments ------------------------------------------------------------
_DROPPED_NAME = re.compile(r"\\(?:" + "|".join(sorted(DROPPED, key=len, reverse=True)) + r")(?![A-Za-z])")
_DROPPED_OR_DELIMITER = re.compile(
    r"\\(?:" + "|".join(sorted(DROPPED | {"begin", "end"}, key=len, reverse=True)) + r")(?![A-Za-z])"
)


def drop_macros(text: str, delimiters: bool = False) -> str:
    """``text`` without the ``DROPPED`` macros and their arguments; a citation's space or tie goes with
    it ("as shown \\cite{k}." → "as shown."). With ``delimiters``, also ``\\begin{…}``/``\\end{…}`` and an
    environment's own arguments (a table's column spec): what the loss guard must not count as words.

    >>> drop_macros(r"as shown~\\cite[p.~3]{smith20}. Then \\label{x}we")
    'as shown. Then we'
    """
    pattern = _DROPPED_OR_DELIMITER if delimiters else _DROPPED_NAME
    if pattern.search(text) is None:
        return text
    out, i = [], 0
    while (m := pattern.search(text, i)) is not None:
        if escaped(text, m.start()):
            out.append(text[i : m.end()])
            i = m.end()
            continue
        name = m.group(0)[1:]
        if name in ("def", "let"):
            end = skip_definition(text, name, m.end())
        elif name == "begin":
            env, end = take_arg(text, m.end())
            end = read_args(text, end, environment_argspec(env))[1]
        elif name == "end":
            end = take_arg(text, m.end())[1]
        else:
            end = read_args(text, m.end(), argspec(name))[1]
        out.append(text[i : m.start()] + _DROPPED_MARK)
        i = end
    out.append(text[i:])
    return _DROPPED_GAP.sub(_gap, "".join(out))


_DROPPED_MARK = "\ue004"
# a run of dropped macros, with the spaces or ties before them and what follows
_DROPPED_GAP = re.compile(f"([\\s~]*){_DROPPED_MARK}(?:[\\s~]*{_DROPPED_MARK})*(?=(\\w?))")


def _gap(m: re.Match) -> str:
    """Nothing, or one space where dropped macros stood between two words ("then \\hspace{1em}more")."""
    return " " if m.group(1) and m.group(2) else ""


_ENVIRONMENT_ARGSPECS = {"minipage": "[[[{", "wrapfigure": "[{[{", "multicols": "{", **TABLES}


@lru_cache(maxsize=1024)
def environment_argspec(name: str) -> str:
    """The arguments after ``\\begin{name}``; "[" (an option or a theorem's title) when unknown."""
    if name in _ENVIRONMENT_ARGSPECS:
        return _ENVIRONMENT_ARGSPECS[name]
    spec = get_walker_context_db().get_environment_spec(name)
    found = getattr(getattr(spec, "args_parser", None), "argspec", None) if spec is not None else None
    return "[" if found is None else found


def table_cells(body: str, convert, joiner: str) -> str:
    """Rows ("\\\\") joined with "; ", their cells ("&") converted and joined with ``joiner``; empty rows
    left out."""
    rows = []
    for row in split_top(body, "\\\\"):
        cells = [convert(cell).strip() for cell in split_top(row, "&")]
        if any(cells):
            rows.append(joiner.join(cells))
    return "; ".join(rows)


def split_top(s: str, separator: str) -> list[str]:
    """``s`` split at ``separator`` ("&" or "\\\\" with its optional ``[length]``) outside braces and
    nested environments."""
    parts, start, depth, i = [], 0, 0, 0
    while i < len(s):
        ch = s[i]
        if ch == "\\":
            if separator == "\\\\" and s.startswith("\\\\", i) and depth == 0:
                parts.append(s[start:i])
                i = start = read_args(s, i + 2, "*[")[1]
                continue
            if s.startswith("\\begin", i):
                depth += 1
            elif s.startswith("\\end", i):
                depth -= 1
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == separator and depth == 0:
            parts.append(s[start:i])
            start = i + 1
        i += 1
    parts.append(s[start:])
    return parts
