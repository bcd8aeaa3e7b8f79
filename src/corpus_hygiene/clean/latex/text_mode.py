r"""LaTeX → readable Unicode text, read the way LaTeX reads it, with pylatexenc doing the symbol work.

Each record is converted on its own: nothing is shared between calls but pure caches (a ``\title`` in
one abstract is never printed by a ``\maketitle`` in another). What this adds to
``LatexNodes2Text().latex_to_text`` are ten deliberate differences, each a class named in the table
of ``docs/text.md`` (the one list of them) and in ``tests/cases/latex_differential.json``:
``literal_characters``, ``symbols``, ``math_unicode``, ``math_spacing``, ``environments``,
``words_kept``, ``urls``, ``verbatim``, ``citations_dropped``, ``typography``.

Spaces after a control word are swallowed as TeX does (``\L ukasz`` Łukasz, ``\ie we`` "we"); a control
space (``\ ``, ``\`` at a line end) is a space. An unknown macro without arguments prints nothing in
text (``\ie``: a user's shorthand) and its name in math (``\argmax``). Nesting deeper than
``MAX_DEPTH`` groups is flattened (braces and macro names dropped), never recursed into.

>>> latex_to_unicode(r"$\Theta(\sigma^{-2})$ and DA$^{2}$ at 100% in 360$^\circ$")
'Θ(σ⁻²) and DA² at 100% in 360°'
>>> latex_to_unicode(r"\L ukasz shows $O(n\log n)$ time, $a \ne b$ (Fig.~3)")
'Łukasz shows O(n log n) time, a ≠ b (Fig. 3)'
"""

from __future__ import annotations

import re

from corpus_hygiene.clean.latex.arguments import (
    MACRO,
    argspec,
    drop_macros,
    environment_argspec,
    environment_end,
    read_args,
    skip_definition,
    skip_spaces,
    table_cells,
    take_arg,
)
from corpus_hygiene.clean.latex.markup import (
    ACCENT_MACROS,
    DROPPED,
    HEADINGS,
    KEEP_ARGUMENT,
    LAST_ARGUMENT,
    MATH_ENVIRONMENTS,
    MATRICES,
    MAX_DEPTH,
    NOTHING,
    OPERATORS,
    PRIVATE,
    ROWS_ENVIRONMENTS,
    SPACE_WORDS,
    SPACES,
    SYMBOLS,
    TABLES,
    WORD_CLOSE,
    WORD_OPEN,
    Shelf,
    flatten,
    has_text_rule,
    pylatexenc_text,
    upright_greek,
)
from corpus_hygiene.clean.latex.math_mode import math_to_unicode, words_spaced
from corpus_hygiene.clean.latex.spans import find_math_spans

# ---- gates ------------------------------------------------------------------------------------
_HAS_LATEX = re.compile(r"\\.|\$|``|--|\S~\S", re.S)


def may_contain_latex(text: str) -> bool:
    return _HAS_LATEX.search(text) is not None


# ---- text mode ----------------------------------------------------------------------------------
_VERBATIM = re.compile(
    r"\\verb\*?([^A-Za-z\s*])(.*?)\1"
    r"|\\begin\{(verbatim\*?|Verbatim|lstlisting|alltt)\}(?:\[[^\]]*\])?(.*?)\\end\{\3\}"
    r"|\\begin\{minted\}(?:\[[^\]]*\])?\{[^{}]*\}(.*?)\\end\{minted\}",
    re.S,
)
_PRINTS_AS_TYPED = re.compile(r"\\verb|\\textbackslash|\\begin\{(?:[Vv]erbatim|lstlisting|alltt|minted)")


def prints_markup_as_typed(text: str) -> bool:
    """``text`` holds verbatim content or a ``\\textbackslash``: its conversion may print LaTeX as typed,
    which converting again would change (so cleaning converts it once)."""
    return _PRINTS_AS_TYPED.search(text) is not None


_URL_MACRO = re.compile(r"\\(url|href)(?![A-Za-z])")
_BARE_URL = re.compile(r"https?://[^\s{}\\<>\"]+[^\s{}\\<>\".,;:!?)\]]")
MATH_IN_TEXT = frozenset("sqrt frac dfrac tfrac binom ensuremath".split())
_TYPOGRAPHY = re.compile(r"---|--|``|''|(?P<approx>(?<![^\s(\[])~(?=\s*\d))|~|[{}]")
_TYPOGRAPHY_TEXT = {"---": "—", "--": "–", "``": "“", "''": "”", "~": " ", "{": "", "}": ""}


def latex_to_unicode(text: str) -> str:
    """Convert LaTeX markup in an abstract to plain Unicode text (see the module docstring)."""
    if PRIVATE.search(text):
        return text  # our placeholder characters are already in the text: converting could garble it
    shelf = Shelf()
    text = _VERBATIM.sub(lambda m: shelf.put(next(g for g in m.group(2, 4, 5) if g is not None)), text)
    text = _protect_urls(text, shelf)
    text = drop_macros(text)
    pieces, last = [], 0
    for start, end, content in find_math_spans(text):
        pieces.append(text[last:start])
        pieces.append(shelf.put(math_to_unicode(content)))
        last = end
    pieces.append(text[last:])
    return words_spaced(shelf.restore(_text_mode("".join(pieces), 0)))


def _protect_urls(text: str, shelf: Shelf, depth: int = 0) -> str:
    """``\\url{u}`` → u and ``\\href{u}{text}`` → "text (u)" (the text still LaTeX, its own links
    protected too), bare links: each URL kept as typed, out of the converter's reach."""
    if ("\\url" in text or "\\href" in text) and depth <= MAX_DEPTH:
        out, i = [], 0
        while (m := _URL_MACRO.search(text, i)) is not None:
            url, end = take_arg(text, m.end())
            out.append(text[i : m.start()])
            if m.group(1) == "url":
                out.append(shelf.put(url))
            else:
                label, end = take_arg(text, end)
                out.append(f"{{{_protect_urls(label, shelf, depth + 1)}}} ({shelf.put(url)})")
            i = end
        text = "".join(out) + text[i:]
    return _BARE_URL.sub(lambda m: shelf.put(m.group(0)), text)


def _text_mode(text: str, depth: int) -> str:
    """Convert text-mode LaTeX one macro at a time.

    pylatexenc tokenises every character of what it is given (~50 abstracts/s on whole texts), while
    the macros of an abstract are a few short fragments: each macro with its arguments is converted
    alone (the rules here, or pylatexenc, cached), the plain text between them keeps every character
    but for the ``typography`` rules and grouping braces, which LaTeX never prints.
    """
    if depth > MAX_DEPTH:
        return flatten(text)
    out: list[str] = []
    i = 0
    while True:
        j = text.find("\\", i)
        out.append(_typography(text, i, len(text) if j == -1 else j))
        if j == -1:
            return "".join(out)
        i = _text_macro(text, j, out, depth)


def _typography(text: str, start: int, end: int) -> str:
    """``text[start:end]`` with dashes, quotes and ties as LaTeX prints them (``--`` –, ````x''`` “x”,
    ``Fig.~3`` "Fig. 3"), and "~10" after a space kept: an approximate number."""
    piece = text[start:end]
    if not any(c in piece for c in "-`'~{}"):
        return piece
    out, last = [], start
    for m in _TYPOGRAPHY.finditer(text, start, end):
        out.append(text[last : m.start()])
        out.append("~" if m.group("approx") else _TYPOGRAPHY_TEXT[m.group(0)])
        last = m.end()
    out.append(text[last:end])
    return "".join(out)


def _text_macro(text: str, j: int, out: list[str], depth: int) -> int:
    """Convert the macro at ``text[j]`` into ``out``; return where it and its arguments end."""
    m = MACRO.match(text, j)
    if m is None:  # a lone backslash at the very end: LaTeX prints nothing for it
        return len(text)
    name, k = m.group(1), m.end()
    if not name.isalpha():
        return _text_symbol(text, k, name, out)
    if name == "begin":
        return _text_environment(text, j, k, out, depth)
    if name == "end":
        return take_arg(text, k)[1]
    if name in ("def", "let"):
        return skip_definition(text, name, k)
    if name in DROPPED:
        return read_args(text, k, argspec(name))[1]
    if (rule := _TEXT_RULES.get(name)) is not None:
        printed, k = rule(text, k, name, depth)
        out.append(printed)
        return k
    if name in MATH_IN_TEXT:
        end = read_args(text, k, argspec(name) or "{")[1]
        out.append(math_to_unicode(text[j:end]))
        return end
    return _text_by_class(text, j, k, name, out, depth)


def _text_symbol(text: str, k: int, name: str, out: list[str]) -> int:
    """A control symbol (``\\\\``, ``\\,``, ``\\%``, ``\\'``…) whose name ends at ``k``."""
    if name == "\\":  # a line break, with its optional star and length
        out.append(" ")
        return read_args(text, k, "*[")[1]
    if name in SPACES or name in NOTHING:
        out.append(SPACES.get(name, ""))
    elif name in "%&#$_{}":
        out.append(name)
    elif name in ACCENT_MACROS:
        arg, k = take_arg(text, k)
        out.append(pylatexenc_text(f"\\{name}{{{arg}}}"))
    elif name not in "()[]":  # an unmatched math delimiter prints nothing
        out.append(pylatexenc_text(f"\\{name}"))
    return k


def _item(text: str, k: int, name: str, depth: int) -> tuple[str, int]:
    (label,), k = read_args(text, k, "[")
    return (f" {_text_mode(label, depth + 1)} " if label is not None else " • "), k


def _heading(text: str, k: int, name: str, depth: int) -> tuple[str, int]:
    (_, _, title), k = read_args(text, k, "*[{")
    return f" {_text_mode(title or '', depth + 1)} ", k


def _footnote(text: str, k: int, name: str, depth: int) -> tuple[str, int]:
    (_, note), k = read_args(text, k, "[{")
    return f" ({_text_mode(note or '', depth + 1).strip()})", k


_TEXT_RULES = {"item": _item, **dict.fromkeys(HEADINGS, _heading), "footnote": _footnote}


def _text_by_class(text: str, j: int, k: int, name: str, out: list[str], depth: int) -> int:
    """A macro no rule names, by its class; ``k``: where its name ends."""
    spec = argspec(name)
    if name in OPERATORS:  # a math operator outside math: its word, apart from the words beside it
        out.append(f"{WORD_OPEN}{name}{WORD_CLOSE}")
        return k
    if name in SYMBOLS or name in SPACE_WORDS:
        out.append(SYMBOLS.get(name, " "))
        return skip_spaces(text, k)
    if (greek := upright_greek(name)) is not None:
        out.append(pylatexenc_text(f"\\{greek}"))
        return skip_spaces(text, k)
    if name in KEEP_ARGUMENT or not has_text_rule(name):
        # its arguments' text: a text macro's, an unknown macro's (none for one without: ``\ie``)
        spec = spec or ("{" if name in KEEP_ARGUMENT else "")
        args, k = read_args(text, k, spec)
        printed = [a or "" for a, kind in zip(args, spec, strict=True) if kind == "{"]
        while not spec and k < len(text) and text[k] == "{":  # a user's macro: its braced arguments
            arg, k = take_arg(text, k)
            printed.append(arg)
        printed = printed[-1:] if name in LAST_ARGUMENT else printed
        out.append(" ".join(_text_mode(a, depth + 1) for a in printed))
        return k if printed or spec else skip_spaces(text, k)
    end = read_args(text, k, spec)[1]
    out.append(pylatexenc_text(text[j:end]))
    return end if "{" in spec else skip_spaces(text, end)  # TeX: a control word swallows the spaces after it


def _text_environment(text: str, j: int, k: int, out: list[str], depth: int) -> int:
    """``\\begin{name}`` at ``text[j]`` (its name read from ``k``): the body read as its kind is read."""
    name, k = take_arg(text, k)
    body_end, after = environment_end(text, k, name)
    base = name.rstrip("*")
    if base in MATH_ENVIRONMENTS or base in MATRICES or base in ROWS_ENVIRONMENTS:
        out.append(f" {math_to_unicode(text[j:after])} ")
    elif name in TABLES:
        start = read_args(text, k, TABLES[name])[1]
        out.append(f" {table_cells(text[start:body_end], lambda cell: _text_mode(cell, depth + 1), ', ')} ")
    else:
        start = read_args(text, k, environment_argspec(name))[1]
        out.append(f" {_text_mode(text[start:body_end], depth + 1)} ")
    return after
