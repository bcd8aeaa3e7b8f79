r"""LaTeX → readable Unicode text, with pylatexenc doing the macro work.

What this adds to ``LatexNodes2Text().latex_to_text``:
- **Which ``$`` is math.** A ``$`` opens inline math when it is not escaped and the next character is
  not a space; the span closes at the *next* unescaped ``$``, which must follow a non-space character
  and must not be followed by a digit. If the next ``$`` cannot close, the opener was a literal dollar
  (a ``$`` can never appear inside inline math). Prose between the two (three words, or a space after
  an amount: "$2 and US$ 3") is no math unless it holds a math character (``\ ^ _ { } = < > |``).
  So "paid between $20 and $50" has no math, and in "priced at $10 per hour, with $\alpha$-entmax"
  only ``$\alpha$`` is. ``$$…$$``, ``\(…\)`` and ``\[…\]`` are math too. Every other ``$`` is kept
  (pylatexenc would eat it and the next space). ``find_math_spans`` is the one rule: the
  ``no_latex_residue`` check asks it too (``latex_residue``).
- **Literal characters survive.** A bare ``%`` would start a comment and delete the rest of the line,
  ``&`` would become spaces, ``#`` and a ``~`` before a number ("~10x") would be mangled: outside math
  they are escaped before conversion. URLs (``\url``, ``\href`` and bare http links) are protected.
- **Math reads as Unicode.** Superscripts and subscripts use Unicode forms when every character has
  one, else ``^(…)``/``_(…)``; ``^\circ`` is "°"; accents such as ``\widetilde{O}`` combine ("Õ");
  ``\frac{a}{b}`` is "a/b" (parenthesised when needed); spaces around operators are kept
  ("σ → 0", where pylatexenc gives "σ→0").
- **Words are never dropped with their macro.** pylatexenc prints nothing for a macro it knows the
  arguments of but has no text rule for (``\texttt{EXGRPO}``, ``\mbox{…}``, ``\textsf{…}``) and for
  an operator glued to what follows (``\sum_i``). Here every macro follows one of these rules:

  ============================================  =================================================
  macro                                          becomes
  ============================================  =================================================
  text/font macros (``KEEP_ARGUMENT``: \texttt,   their argument, converted (nested macros, ``\_``,
  \textsf, \textsc, \mbox, \text, \mathrm,       ``\&``, ``\#`` come out literal)
  \mathbf, \operatorname, \underline, \emph,
  \footnote, …)
  \url{u} / \href{u}{text}                        ``u`` / ``text (u)``
  \cite…, \ref, \eqref, \autoref, \cref,         nothing, with the space before them: a citation
  \Cref, \pageref, \label, \nocite (``DROPPED``)  key or label is not prose
  \vspace, \hspace, \color, \begin, \end,        nothing: layout, not text
  \includegraphics (``DROPPED``)
  math operators and symbols (\sum, \int,        their Unicode or word form (∑, ∫, log, max), with
  \log, \max, \alpha, …)                         their sub/superscripts (∑ᵢ)
  a macro pylatexenc has a text rule for          pylatexenc's text (\textbf{x} → x, \S → §)
  any other macro with arguments                  its arguments' text (``\method{EXGRPO}`` → EXGRPO)
  any other macro without arguments               in math its name (``\argmax`` → argmax); in text
                                                  nothing (``\ie``: a user's shorthand)
  ============================================  =================================================

>>> latex_to_unicode(r"$\Theta(\sigma^{-2})$ and DA$^{2}$ at 100\% in 360$^\circ$")
'Θ(σ⁻²) and DA² at 100% in 360°'
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
from pylatexenc.latexwalker import get_default_latex_context_db as get_walker_context_db

# ---- gates ------------------------------------------------------------------------------------
_HAS_LATEX = re.compile(r"\\[A-Za-z]|\\[%&$#_{}\"'`^~.=([]|\$|``")


def may_contain_latex(text: str) -> bool:
    return _HAS_LATEX.search(text) is not None


# ---- placeholders: private-use characters pylatexenc passes through untouched ---------------------
_PH_OPEN, _PH_CLOSE = "\ue000", "\ue001"
_PH = re.compile(f"{_PH_OPEN}(\\d+){_PH_CLOSE}")


class _Shelf:
    """Keeps pieces of text out of pylatexenc's reach and puts them back afterwards."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def put(self, text: str) -> str:
        self.items.append(text)
        return f"{_PH_OPEN}{len(self.items) - 1}{_PH_CLOSE}"

    def restore(self, text: str) -> str:
        for _ in range(3):  # placeholders can nest (a URL inside a protected math span)
            text = _PH.sub(lambda m: self.items[int(m.group(1))], text)
            if _PH_OPEN not in text:
                break
        return text


# ---- math spans -------------------------------------------------------------------------------
def _escaped(text: str, i: int) -> bool:
    backslashes = 0
    while i - 1 - backslashes >= 0 and text[i - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


_PROSE = re.compile(r"(?:\b[^\W\d_]{2,}\b\s+){3,}")
_MATHY = re.compile(r"[\\^_{}=<>|]")


def find_math_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of every math span, by the rule in the module docstring.

    >>> [c for _, _, c in find_math_spans(r"priced at $10 per hour, with $\\alpha$-entmax")]
    ['\\\\alpha']
    >>> find_math_spans("paid between $20 and $50 per annotator")
    []
    """
    spans = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] in "([":
            close = "\\)" if text[i + 1] == "(" else "\\]"
            end = text.find(close, i + 2)
            if end != -1:
                spans.append((i, end + 2, text[i + 2 : end]))
                i = end + 2
                continue
        if ch == "\\":
            i += 2
            continue
        if ch != "$":
            i += 1
            continue
        if text.startswith("$$", i):
            end = text.find("$$", i + 2)
            if end != -1 and end > i + 2:
                spans.append((i, end + 2, text[i + 2 : end]))
                i = end + 2
                continue
        j = text.find("$", i + 1)
        while j != -1 and _escaped(text, j):
            j = text.find("$", j + 1)
        content = text[i + 1 : j] if j != -1 else ""
        opens = i + 1 < n and not text[i + 1].isspace()
        currency_like = content[:1].isdigit()
        closes = (
            j != -1
            and not text[j - 1].isspace()
            and not (currency_like and j + 1 < n and text[j + 1].isdigit())
        )
        # prose between two dollars ("$2 and US$ 3", "$10 to $20") is not math unless it has math in it
        prose = _PROSE.search(content) or (currency_like and any(c.isspace() for c in content))
        if opens and closes and content and not (prose and not _MATHY.search(content)):
            spans.append((i, j + 1, content))
            i = j + 1
        else:
            i += 1  # a literal dollar
    return spans


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


# ---- math to Unicode ----------------------------------------------------------------------------
_SUP = dict(
    zip(
        "0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWβγδθφχ−ⁱ",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵝᵞᵟᶿᵠᵡ⁻ⁱ",
        strict=True,
    )
)
_SUP.update({"⊤": "ᵀ", "′": "′", "*": "*", "∗": "*", "'": "′", "†": "†"})  # ⊤ (\top): transpose
_SUB = dict(
    zip("0123456789+-=()aehijklmnoprstuvxβγρφχ−", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ₋", strict=True)
)

_ACCENTS = {  # combining characters; NFC later composes what has a precomposed form (O + ̃ → Õ)
    "widetilde": "\u0303",
    "tilde": "\u0303",
    "hat": "\u0302",
    "widehat": "\u0302",
    "bar": "\u0304",
    "overline": "\u0305",
    "vec": "\u20d7",
    "dot": "\u0307",
    "ddot": "\u0308",
    "check": "\u030c",
    "breve": "\u0306",
    "acute": "\u0301",
    "grave": "\u0300",
}
# Macros whose argument is prose or a name: it is kept, converted (the table in the module docstring).
KEEP_ARGUMENT = frozenset(
    (
        "text textrm textsf texttt textsc textup textmd textbf textit textsl textnormal emph mbox hbox "
        "underline uline mathrm mathit mathbf mathsf mathtt mathnormal operatorname boldsymbol bm pmb "
        "footnote textsuperscript textsubscript"
    ).split()
)
# Macros dropped with their arguments: citation keys, labels, layout (the module docstring's table).
DROPPED = frozenset(
    (
        "cite citep citet citealp citealt citeauthor citeyear nocite ref eqref autoref cref Cref pageref "
        "label vspace hspace color begin end includegraphics"
    ).split()
)
_SIZING = {
    "left",
    "right",
    "big",
    "Big",
    "bigg",
    "Bigg",
    "bigl",
    "bigr",
    "Bigl",
    "Bigr",
    "biggl",
    "biggr",
    "displaystyle",
    "textstyle",
    "scriptstyle",
    "limits",
    "nolimits",
    "middle",
}
_MACRO = re.compile(r"\\([A-Za-z]+|.)", re.S)


def _take_arg(s: str, i: int) -> tuple[str, int]:
    """The argument starting at s[i] (after spaces): a {balanced group}, a \\macro, or one character."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        return "", i
    if s[i] == "{":
        depth = 0
        for j in range(i, len(s)):
            if s[j] == "{" and not _escaped(s, j):
                depth += 1
            elif s[j] == "}" and not _escaped(s, j):
                depth -= 1
                if depth == 0:
                    return s[i + 1 : j], j + 1
        return s[i + 1 :], len(s)
    m = _MACRO.match(s, i)
    if m:
        return m.group(0), m.end()
    return s[i], i + 1


def _wrap(text: str) -> str:
    text = text.strip()
    simple = len(text) <= 1 or re.fullmatch(r"[\w.]+|\(.*\)", text) is not None
    return text if simple else f"({text})"


def _script(kind: str, text: str) -> str:
    table = _SUP if kind == "^" else _SUB
    text = text.strip()
    if text and all(ch in table for ch in text):
        return "".join(table[ch] for ch in text)
    return f"{kind}{text}" if len(text) == 1 else f"{kind}({text})"


@lru_cache(maxsize=1)
def _converter() -> LatexNodes2Text:
    db = get_default_latex_context_db().filter_context(keep_categories=None)
    db.add_context_category(
        "corpus-hygiene",
        prepend=True,
        macros=[
            MacroTextSpec("url", simplify_repl="%(1)s"),
            MacroTextSpec("href", simplify_repl="%(2)s (%(1)s)"),
            MacroTextSpec("cite", simplify_repl=""),
            MacroTextSpec("citep", simplify_repl=""),
            MacroTextSpec("citet", simplify_repl=""),
            MacroTextSpec("ref", simplify_repl=""),
            MacroTextSpec("label", simplify_repl=""),
            MacroTextSpec("footnote", simplify_repl=""),
            MacroTextSpec("LaTeX", simplify_repl="LaTeX"),
            MacroTextSpec("TeX", simplify_repl="TeX"),
            MacroTextSpec("S", simplify_repl="§"),
            MacroTextSpec("prime", simplify_repl="′"),
            MacroTextSpec("|", simplify_repl="‖"),
            MacroTextSpec("Vert", simplify_repl="‖"),
            MacroTextSpec("lVert", simplify_repl="‖"),
            MacroTextSpec("rVert", simplify_repl="‖"),
            MacroTextSpec("vert", simplify_repl="|"),
            MacroTextSpec("lvert", simplify_repl="|"),
            MacroTextSpec("rvert", simplify_repl="|"),
        ],
    )
    return LatexNodes2Text(latex_context=db, math_mode="text", strict_latex_spaces=False)


@lru_cache(maxsize=4096)
def _has_text_rule(name: str) -> bool:
    """pylatexenc knows what to print for ``\\name``."""
    return _converter().latex_context.get_macro_spec(name) is not None


@lru_cache(maxsize=4096)
def _mandatory_args(name: str) -> int:
    spec = get_walker_context_db().get_macro_spec(name)
    return 0 if spec is None else getattr(spec.args_parser, "argspec", "").count("{")


@lru_cache(maxsize=65536)
def _pylatexenc(text: str) -> str:
    """pylatexenc on one small fragment; fragments repeat ("$k$", "\\textbf{…}"), so cached."""
    return _converter().latex_to_text(text)


def math_to_unicode(s: str) -> str:
    """Convert the content of one math span.

    >>> math_to_unicode(r"\\widetilde{O}({1}/{\\varepsilon^7})")
    'Õ(1/ε⁷)'
    """
    return unicodedata.normalize("NFC", _pylatexenc(_math_pass(s)))


def _math_pass(s: str) -> str:
    """Rewrite what pylatexenc renders poorly; leave the rest for it."""
    s = re.sub(r"\^\s*\{?\s*\\circ\s*\}?", "°", s)
    out: list[str] = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch in "^_":
            arg, i = _take_arg(s, i + 1)
            out.append(_script(ch, math_to_unicode(arg)))
        elif ch == "{":
            arg, i = _take_arg(s, i)
            out.append(_math_pass(arg))
        elif ch == "\\":
            m = _MACRO.match(s, i)
            if m is None:  # a lone backslash at the very end
                break
            name, i = m.group(1), m.end()
            if name in _ACCENTS:
                arg, i = _take_arg(s, i)
                inner = math_to_unicode(arg)
                out.append(inner[:1] + _ACCENTS[name] + inner[1:] if inner else "")
            elif name in ("frac", "dfrac", "tfrac"):
                num, i = _take_arg(s, i)
                den, i = _take_arg(s, i)
                out.append(f"{_wrap(math_to_unicode(num))}/{_wrap(math_to_unicode(den))}")
            elif name in ("binom", "dbinom", "tbinom"):
                top, i = _take_arg(s, i)
                bottom, i = _take_arg(s, i)
                out.append(f"C({math_to_unicode(top)}, {math_to_unicode(bottom)})")
            elif name == "sqrt":
                arg, i = _take_arg(s, i)
                out.append("√" + _wrap(math_to_unicode(arg)))
            elif name in KEEP_ARGUMENT:
                arg, i = _take_arg(s, i)
                out.append(_math_pass(arg))
            elif name in _SIZING:
                continue
            elif name.isalpha() and not _has_text_rule(name):
                nargs = _mandatory_args(name)
                if not nargs:
                    out.append(name)  # \argmax, \softmax: an operator's name is its word
                for _ in range(nargs):
                    arg, i = _take_arg(s, i)
                    out.append(_math_pass(arg))
            else:
                out.append(m.group(0))
                nargs = _mandatory_args(name) if name.isalpha() else 0
                for _ in range(nargs):  # \mathbb{R}, \mathcal{O}: pylatexenc's own macros, args kept
                    arg, i = _take_arg(s, i)
                    out.append("{" + _math_pass(arg) + "}")
                if name.isalpha() and not nargs:
                    # An empty group ends the macro's name: pylatexenc would otherwise take the space
                    # after it ("σ → 0") or the Unicode sub/superscript glued to it (\sum + ᵢ).
                    out.append("{}")
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# ---- text mode ----------------------------------------------------------------------------------
# with the space or tie before it, its optional and mandatory arguments (unclosed at the end of a
# truncated text: "… as shown \cite{smi")
_DROPPED_MACRO = re.compile(
    r"([\s~]*)\\(?:"
    + "|".join(sorted(DROPPED, key=len, reverse=True))
    + r")\*?(?:\[[^\]]*\])*\{[^{}]*(?:\}|$)(?=(\w?))"
)


_DROPPED_NAME = re.compile(r"\\(?:" + "|".join(sorted(DROPPED, key=len, reverse=True)) + ")")


def drop_macros(text: str) -> str:
    """``text`` without the ``DROPPED`` macros and their arguments. The pattern starts with optional
    spaces, which Python's re tries at every position: it runs only on texts that name such a macro."""
    return _DROPPED_MACRO.sub(_drop, text) if _DROPPED_NAME.search(text) else text


def _drop(m: re.Match) -> str:
    """Nothing, or one space where the macro stood between two words ("then \\hspace{1em}more")."""
    return " " if m.group(1) and m.group(2) else ""


_URL_MACRO = re.compile(r"\\url\{([^{}]*)\}|\\href\{([^{}]*)\}\{([^{}]*)\}")
_BARE_URL = re.compile(r"https?://[^\s{}\\<>\"]+[^\s{}\\<>\".,;:!?)\]]")
_LITERAL = re.compile(r"(?<!\\)([%&#])|(?<!\\)~(?=\s*\d)|(?<=\s)~|(?<!\\)\$")


def latex_to_unicode(text: str) -> str:
    """Convert LaTeX markup in an abstract to plain Unicode text (see the module docstring)."""
    if _PH_OPEN in text or _PH_CLOSE in text:
        return text  # our placeholder characters are already in the text: converting could garble it
    shelf = _Shelf()

    def url(m: re.Match) -> str:
        if m.group(1) is not None:
            return shelf.put(m.group(1))
        return shelf.put(f"{m.group(3)} ({m.group(2)})")

    text = drop_macros(text)
    text = _URL_MACRO.sub(url, text)
    text = _BARE_URL.sub(lambda m: shelf.put(m.group(0)), text)
    pieces, last = [], 0
    for start, end, content in find_math_spans(text):
        pieces.append(text[last:start])
        pieces.append(shelf.put(math_to_unicode(content)))
        last = end
    pieces.append(text[last:])
    text = "".join(pieces)
    text = _LITERAL.sub(lambda m: shelf.put(m.group(0)), text)
    return shelf.restore(_text_mode(text))


_ACCENT_MACROS = set("\"'`^~=.uvHcdbtrk")
_QUOTES = re.compile(r"``(.*?)''", re.S)
_BRACES = re.compile(r"(?<!\\)[{}]")


def _text_mode(text: str) -> str:
    """Convert text-mode LaTeX one macro at a time.

    pylatexenc tokenises every character of what it is given (~50 abstracts/s on whole texts), while
    the macros of an abstract are a few short fragments: each macro with its arguments goes to
    pylatexenc alone (cached), the plain text between them stays as it is, apart from LaTeX quotes
    (``…'' → “…”) and grouping braces, which LaTeX never prints.
    """
    out: list[str] = []
    i = 0
    while True:
        j = text.find("\\", i)
        plain = text[i:] if j == -1 else text[i:j]
        out.append(_BRACES.sub("", _QUOTES.sub(r"“\1”", plain)))
        if j == -1:
            break
        m = _MACRO.match(text, j)
        if m is None:  # a lone backslash at the very end: LaTeX prints nothing for it
            break
        name, k = m.group(1), m.end()
        if name in KEEP_ARGUMENT or (name.isalpha() and not _has_text_rule(name)):
            # its arguments' text (none for an unknown macro without arguments: ``\ie``)
            nargs = max(_mandatory_args(name), 1 if name in KEEP_ARGUMENT else 0)
            for _ in range(nargs):
                arg, k = _take_arg(text, k)
                out.append(_text_mode(arg))
            while not nargs and k < len(text) and text[k] == "{":  # a user's macro: its braced arguments
                arg, k = _take_arg(text, k)
                out.append(_text_mode(arg))
            i = k
            continue
        if name in _ACCENT_MACROS:
            _, k = _take_arg(text, k)  # \"o, \"{o}, \v{s}
        elif name.isalpha():
            for _ in range(_mandatory_args(name)):
                _, k = _take_arg(text, k)
        out.append(_pylatexenc(text[j:k]))
        i = k
    return "".join(out)
