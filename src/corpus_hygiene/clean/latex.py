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
import unicodedata
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
from pylatexenc.latexwalker import get_default_latex_context_db as get_walker_context_db

MAX_DEPTH = 40  # nested groups converted; deeper ones are flattened (no recursion on hostile input)

# ---- gates ------------------------------------------------------------------------------------
_HAS_LATEX = re.compile(r"\\.|\$|``|--|\S~\S", re.S)


def may_contain_latex(text: str) -> bool:
    return _HAS_LATEX.search(text) is not None


# ---- placeholders: private-use characters pylatexenc passes through untouched ---------------------
_PH_OPEN, _PH_CLOSE = "\ue000", "\ue001"
_PH = re.compile(f"{_PH_OPEN}(\\d+){_PH_CLOSE}")
# around an operator's word in math: a space where it meets a letter or digit ("n log n"), else none
_WORD_OPEN, _WORD_CLOSE = "\ue002", "\ue003"
_PRIVATE = re.compile("[\ue000-\ue004]")


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


# ---- macro classes ------------------------------------------------------------------------------
# Macros whose argument is prose or a name: it is kept, converted (the ``words_kept`` class).
KEEP_ARGUMENT = frozenset(
    (
        "text textrm textsf texttt textsc textup textmd textbf textit textsl textnormal emph mbox hbox "
        "underline uline mathrm mathit mathbf mathsf mathtt mathnormal operatorname boldsymbol bm pmb "
        "textsuperscript textsubscript title author date caption fbox framebox makebox parbox raisebox "
        "textcolor colorbox hyperref hyperlink hypertarget thanks subtitle paragraph subparagraph"
    ).split()
)
# Of these, the ones whose last mandatory argument alone is text (the others are a colour, a size…).
_LAST_ARGUMENT = frozenset("textcolor colorbox parbox raisebox hyperlink hypertarget".split())
HEADINGS = frozenset("part chapter section subsection subsubsection".split())
# Macros dropped with their arguments: citation keys, labels, layout, definitions (``citations_dropped``).
DROPPED = frozenset(
    (
        "cite citep citet citealp citealt citeauthor citeyear citenum nocite ref eqref autoref cref Cref "
        "pageref label vspace hspace color includegraphics tag nonumber notag footnotemark hline cline "
        "toprule midrule bottomrule cmidrule bibliography bibliographystyle index usepackage "
        "documentclass setlength addtolength setcounter newcommand renewcommand providecommand "
        "DeclareMathOperator newenvironment renewenvironment newtheorem def let maketitle tableofcontents "
        "listoffigures listoftables printbibliography appendix clearpage newpage pagebreak"
    ).split()
)
# Argument specs ("*" a star, "[" an optional argument, "{" a mandatory one) where pylatexenc has none or
# another: name:spec pairs.
_ARGSPECS = dict(
    pair.split(":")
    for pair in """
    href:{{ operatorname:*{ caption:*[{ fbox:{ framebox:[[{ makebox:[[{ parbox:[[[{{ raisebox:{[[{
    hyperref:[{ hyperlink:{{ hypertarget:{{ textsuperscript:{ textsubscript:{ overset:{{ underset:{{
    stackrel:{{ tag:*{ footnotemark:[ thanks:{ newtheorem:*{[{[ cmidrule:[{ cline:{ pmod:{ mod:{ pod:{
    title:[{ author:[{ subtitle:{ part:*[{ paragraph:*[{ includegraphics:*[[{ bibliographystyle:{ index:{
    setlength:{{ addtolength:{{ setcounter:{{ ref:*{ eqref:*{ autoref:*{ cref:*{ Cref:*{ pageref:*{
    citeyear:*[[{ citenum:*[[{ nocite:*[[{
    """.split()
)

# Symbols pylatexenc has no text for; upgreek's upright letters (\upalpha) are handled by name.
_SYMBOLS = dict(
    zip(
        (
            "ne neq land lor lnot neg bot ddagger ddag gets iff implies impliedby Re Im triangle Box "
            "models checkmark coloneqq colon S P copyright pounds euro degree textdegree textless "
            "textgreater textbar textasciicircum textunderscore"
        ).split(),
        "≠≠∧∨¬¬⊥‡‡←⟺⟹⟸ℜℑ△□⊨✓≔:§¶©£€°°<>|^_",
        strict=True,
    )
)
_SYMBOLS["bmod"] = f"{_WORD_OPEN}mod{_WORD_CLOSE}"  # an operator's word (``_words_spaced``)
# Operators printed as their name ("log", "max"), standing apart from letters and digits.
OPERATORS = frozenset(
    (
        "log ln lg exp sin cos tan sec csc cot arcsin arccos arctan sinh cosh tanh coth max min arg argmax "
        "argmin det dim lim liminf limsup sup inf Pr ker deg gcd lcm hom"
    ).split()
)
_GREEK = frozenset(
    (
        "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi "
        "varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi "
        "Pi Sigma Upsilon Phi Psi Omega"
    ).split()
)
_SIZING = frozenset(
    (
        "left right big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr displaystyle textstyle scriptstyle "
        "scriptscriptstyle limits nolimits middle"
    ).split()
)
_SPACES = {",": " ", ";": " ", ":": " ", ">": " ", " ": " ", "\n": " ", "\t": " ", "\r": " "}
_NOTHING = frozenset("!-/@")
_SPACE_WORDS = frozenset(
    "quad qquad enspace thinspace medspace thickspace newline linebreak par break".split()
)
_ACCENT_MACROS = frozenset("\"'`^~=.uvHcdbtrk")
# Environments by how their body reads.
MATH_ENVIRONMENTS = frozenset(
    "equation align alignat flalign gather multline eqnarray displaymath math dmath subequations".split()
)
_ROWS_ENVIRONMENTS = frozenset("aligned alignedat gathered split multlined".split())  # in math: & aligns
_MATRICES = {
    "matrix": ("", ""),
    "smallmatrix": ("", ""),
    "array": ("", ""),
    "cases": ("", ""),
    "pmatrix": ("(", ")"),
    "bmatrix": ("[", "]"),
    "Bmatrix": ("{", "}"),
    "vmatrix": ("|", "|"),
    "Vmatrix": ("‖", "‖"),
}
_TABLES = {
    "tabular": "{",
    "tabular*": "{{",
    "tabularx": "{{",
    "longtable": "[{",
    "array": "[{",
    "tabulary": "{{",
}
VERBATIM_ENVIRONMENTS = frozenset("verbatim verbatim* Verbatim lstlisting minted alltt".split())


def _upright_greek(name: str) -> str | None:
    """upgreek's ``\\upalpha``/``\\Upgamma``: the Greek macro it is an upright form of."""
    if name.startswith("up") and name[2:] in _GREEK:
        return name[2:]
    if name.startswith("Up") and name[2:].capitalize() in _GREEK:
        return name[2:].capitalize()
    return None


# ---- arguments ----------------------------------------------------------------------------------
_MACRO = re.compile(r"\\([A-Za-z]+|.)", re.S)


def _escaped(text: str, i: int) -> bool:
    backslashes = 0
    while i - 1 - backslashes >= 0 and text[i - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _skip_spaces(s: str, i: int) -> int:
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


def _take_arg(s: str, i: int, with_args: bool = False) -> tuple[str, int]:
    """The argument starting at s[i] (after spaces): a {balanced group}, a \\macro (with its own
    arguments when ``with_args``: ``T_\\mathrm{max}``), or one character."""
    i = _skip_spaces(s, i)
    if i >= len(s):
        return "", i
    if s[i] == "{":
        end = _group_end(s, i)
        return s[i + 1 : end - 1 if s[end - 1 : end] == "}" and end - 1 > i else end], end
    m = _MACRO.match(s, i)
    if m:
        end = m.end()
        if with_args and m.group(1).isalpha():
            _, end = _args(s, end, _argspec(m.group(1)))
        return s[i:end], end
    return s[i], i + 1


def _args(s: str, i: int, spec: str) -> tuple[list[str | None], int]:
    """The arguments ``spec`` describes, from ``s[i]``: "*" → "*" or None, "[" → its content or None,
    "{" → the argument (``_take_arg``)."""
    found: list[str | None] = []
    for kind in spec:
        j = _skip_spaces(s, i)
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
            arg, i = _take_arg(s, i)
            found.append(arg)
    return found, i


@lru_cache(maxsize=4096)
def _argspec(name: str) -> str:
    if name in _ARGSPECS:
        return _ARGSPECS[name]
    spec = get_walker_context_db().get_macro_spec(name)
    return getattr(getattr(spec, "args_parser", None), "argspec", "") if spec is not None else ""


_PARAMETERS = re.compile(r"[#\d\s]*")


def _skip_definition(s: str, name: str, i: int) -> int:
    """After ``\\def`` or ``\\let``: the name defined, and its parameter text and body
    (``\\def\\x#1{…}``) or the macro it is let to (``\\let\\a=\\b``)."""
    m = _MACRO.match(s, _skip_spaces(s, i))
    if m is None:
        return i
    i = m.end()
    if name == "let":
        j = _skip_spaces(s, i)
        j = _skip_spaces(s, j + 1) if s[j : j + 1] == "=" else j
        return _take_arg(s, j)[1]
    j = _PARAMETERS.match(s, i).end()
    return _group_end(s, j) if s[j : j + 1] == "{" else i


# ---- math spans -------------------------------------------------------------------------------
_PROSE = re.compile(r"(?:\b[^\W\d_]{2,}\b\s+){3,}")
_MATHY = re.compile(r"[\\^_{}=<>|]")
_BEGIN = re.compile(r"\\begin\s*\{([A-Za-z]+\*?)\}")


def _environment_end(text: str, start: int, name: str) -> tuple[int, int]:
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
            begin = _BEGIN.match(text, i) if text.startswith("\\begin", i) else None
            if begin and begin.group(1).rstrip("*") in MATH_ENVIRONMENTS:
                _, end = _environment_end(text, begin.end(), begin.group(1))
                spans.append((i, end, text[i:end]))
                i = end
                continue
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
        if _escaped(text, m.start()):
            out.append(text[i : m.end()])
            i = m.end()
            continue
        name = m.group(0)[1:]
        if name in ("def", "let"):
            end = _skip_definition(text, name, m.end())
        elif name == "begin":
            env, end = _take_arg(text, m.end())
            end = _args(text, end, _environment_argspec(env))[1]
        elif name == "end":
            end = _take_arg(text, m.end())[1]
        else:
            end = _args(text, m.end(), _argspec(name))[1]
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


_ENVIRONMENT_ARGSPECS = {"minipage": "[[[{", "wrapfigure": "[{[{", "multicols": "{", **_TABLES}


@lru_cache(maxsize=1024)
def _environment_argspec(name: str) -> str:
    """The arguments after ``\\begin{name}``; "[" (an option or a theorem's title) when unknown."""
    if name in _ENVIRONMENT_ARGSPECS:
        return _ENVIRONMENT_ARGSPECS[name]
    spec = get_walker_context_db().get_environment_spec(name)
    found = getattr(getattr(spec, "args_parser", None), "argspec", None) if spec is not None else None
    return "[" if found is None else found


# ---- pylatexenc, one fragment at a time -------------------------------------------------------------
@lru_cache(maxsize=1)
def _context():
    db = get_default_latex_context_db().filter_context(keep_categories=None)
    db.add_context_category(
        "corpus-hygiene",
        prepend=True,
        macros=[
            MacroTextSpec("LaTeX", simplify_repl="LaTeX"),
            MacroTextSpec("TeX", simplify_repl="TeX"),
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
    return db


@lru_cache(maxsize=4096)
def _has_text_rule(name: str) -> bool:
    """pylatexenc knows what to print for ``\\name``."""
    return _context().get_macro_spec(name) is not None


_BARE_SPECIAL = re.compile(r"(?<!\\)([%&#])")


@lru_cache(maxsize=65536)
def _pylatexenc(fragment: str) -> str:
    """pylatexenc on one small fragment, by a converter of its own (pylatexenc's converter keeps state:
    a ``\\title`` it saw is printed by a later ``\\maketitle``). Fragments repeat ("\\alpha", "\\'e"), so
    cached. pylatexenc raises on some valid input (``\\sqrt[3]{x}`` in text): such a fragment prints
    its arguments' text."""
    fragment = _BARE_SPECIAL.sub(r"\\\1", fragment)
    try:
        return LatexNodes2Text(
            latex_context=_context(), math_mode="text", strict_latex_spaces=False
        ).latex_to_text(fragment)
    except Exception:
        return _flatten(fragment)


_FLATTEN = re.compile(r"\\[A-Za-z]+\*?\s*|\\(?=[^A-Za-z])|[{}]")


def _flatten(text: str) -> str:
    """Macro names, backslashes and braces removed: what nesting deeper than ``MAX_DEPTH`` becomes."""
    return _FLATTEN.sub("", text)


# ---- math to Unicode ----------------------------------------------------------------------------------
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

_SCRIPT_CHARS = "".join(sorted(set(_SUP.values()) | set(_SUB.values())))
_WORD_AFTER = re.compile(f"(?<=[^\\W_])(?<![{_SCRIPT_CHARS}]){_WORD_OPEN}")
_WORD_BEFORE = re.compile(f"{_WORD_CLOSE}(?=[^\\W_])(?![{_SCRIPT_CHARS}])")


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


def _root(index: str | None, radicand: str, depth: int) -> str:
    inner = _wrap(_math(radicand, depth + 1))
    index = _math(index, depth + 1).strip() if index else ""
    sign = {"": "√", "2": "√", "3": "∛", "4": "∜"}.get(index)
    return (sign or _script("^", index) + "√") + inner


def _words_spaced(text: str) -> str:
    """An operator's word stands apart from a letter or digit beside it ("n log n", "sin θ"), not from
    brackets or its own sub/superscripts ("log(x)", "maxₓ")."""
    if _WORD_OPEN not in text and _WORD_CLOSE not in text:
        return text
    text = text.replace(_WORD_CLOSE + _WORD_OPEN, " ")
    text = _WORD_BEFORE.sub(" ", _WORD_AFTER.sub(" ", text))
    return text.replace(_WORD_OPEN, "").replace(_WORD_CLOSE, "")


@lru_cache(maxsize=65536)
def math_to_unicode(s: str) -> str:
    """Convert the content of one math span (spans repeat: "$k$", "$\\mathcal{O}(n)$", so cached).

    >>> math_to_unicode(r"\\widetilde{O}({1}/{\\varepsilon^7})")
    'Õ(1/ε⁷)'
    >>> math_to_unicode(r"\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}")
    '(a, b; c, d)'
    """
    return _math(s, 0)


def _math(s: str, depth: int) -> str:
    if depth > MAX_DEPTH:
        return _flatten(s)
    return _words_spaced(unicodedata.normalize("NFC", _pylatexenc(_math_pass(s, depth))))


def _math_pass(s: str, depth: int) -> str:
    """Rewrite what pylatexenc renders poorly; leave the rest for it."""
    if depth > MAX_DEPTH:
        return _flatten(s)
    s = re.sub(r"\^\s*\{?\s*\\circ\s*\}?", "°", s)
    out: list[str] = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch in "^_":
            arg, i = _take_arg(s, i + 1, with_args=True)
            out.append(_script(ch, _math(arg, depth + 1)))
        elif ch == "{":
            arg, i = _take_arg(s, i)
            out.append(_math_pass(arg, depth + 1))
        elif ch == "\\":
            i = _math_macro(s, i, out, depth)
        elif ch == "'":  # primes: f′, f″, f‴
            primes = len(s) - len(s[i:].lstrip("'")) - i
            out.append({1: "′", 2: "″", 3: "‴"}.get(primes, "′" * primes))
            i += primes
        else:
            out.append({"}": "", "&": " ", "~": " "}.get(ch, ch))
            i += 1
    return "".join(out)


def _math_macro(s: str, i: int, out: list[str], depth: int) -> int:
    """Convert the macro at ``s[i]`` into ``out``; return where its arguments end."""
    m = _MACRO.match(s, i)
    if m is None:  # a lone backslash at the very end
        return len(s)
    name, i = m.group(1), m.end()
    if not name.isalpha():
        if name == "\\":
            out.append("; ")
            return _args(s, i, "*[")[1]
        if name in _SPACES or name in _NOTHING:
            out.append(_SPACES.get(name, ""))
            return i
        out.append(m.group(0))
        return i
    if name == "begin":
        env, i = _take_arg(s, i)
        body_end, after = _environment_end(s, i, env)
        out.append(_math_environment(env, s[i:body_end], depth))
        return after
    if name == "end" or name in DROPPED:
        return _args(s, i, "{" if name == "end" else _argspec(name))[1]
    if name in _SIZING:
        return i
    if name in _ACCENTS:
        arg, i = _take_arg(s, i)
        # on each letter of a longer argument ("\\overline{AB}" A̅B̅): the mark spans them all
        out.append("".join(ch + _ACCENTS[name] if not ch.isspace() else ch for ch in _math(arg, depth + 1)))
    elif name in ("frac", "dfrac", "tfrac", "cfrac"):
        num, i = _take_arg(s, i)
        den, i = _take_arg(s, i)
        out.append(f"{_wrap(_math(num, depth + 1))}/{_wrap(_math(den, depth + 1))}")
    elif name in ("binom", "dbinom", "tbinom"):
        top, i = _take_arg(s, i)
        bottom, i = _take_arg(s, i)
        out.append(f"C({_math(top, depth + 1)}, {_math(bottom, depth + 1)})")
    elif name == "sqrt":
        (index, radicand), i = _args(s, i, "[{")
        out.append(_root(index, radicand or "", depth))
    elif name in ("underset", "overset", "stackrel"):
        (script, base), i = _args(s, i, "{{")
        below = "_" if name == "underset" else "^"
        out.append(_math(base or "", depth + 1) + _script(below, _math(script or "", depth + 1)))
    elif name in ("xrightarrow", "xleftarrow"):
        (under, over), i = _args(s, i, "[{")
        arrow = "→" if name == "xrightarrow" else "←"
        out.append(arrow + (_script("^", _math(over, depth + 1)) if over else ""))
    elif name in ("pmod", "mod", "pod"):
        arg, i = _take_arg(s, i)
        inner = _math(arg, depth + 1)
        out.append({"pmod": f" (mod {inner})", "mod": f" mod {inner}", "pod": f" ({inner})"}[name])
    elif name == "operatorname":
        (_, arg), i = _args(s, i, "*{")
        out.append(f"{_WORD_OPEN}{_math(arg or '', depth + 1)}{_WORD_CLOSE}")
    elif name in OPERATORS:
        out.append(f"{_WORD_OPEN}{name}{_WORD_CLOSE}")
    elif name in KEEP_ARGUMENT:
        spec = _argspec(name) or "{"
        args, i = _args(s, i, spec)
        texts = [a or "" for a, kind in zip(args, spec, strict=True) if kind == "{"]
        out.extend(_math_pass(a, depth + 1) for a in (texts[-1:] if name in _LAST_ARGUMENT else texts))
    elif name in _SYMBOLS:
        out.append(_SYMBOLS[name])
    elif name in _SPACE_WORDS:
        out.append(" ")
    elif (greek := _upright_greek(name)) is not None:
        out.append(f"\\{greek}{{}}")
    elif not _has_text_rule(name):
        spec = _argspec(name)
        args, i = _args(s, i, spec)
        texts = [a or "" for a, kind in zip(args, spec, strict=True) if kind == "{"]
        if not texts:
            out.append(f"{_WORD_OPEN}{name}{_WORD_CLOSE}")  # \argmax, \softmax: an operator's name
        out.extend(_math_pass(a, depth + 1) for a in texts)
    else:
        out.append(m.group(0))
        spec = _argspec(name)
        args, i = _args(s, i, spec)
        # \mathbb{R}, \mathcal{O}: pylatexenc's own macros, their arguments kept for it
        out.extend(
            "{" + _math_pass(a or "", depth + 1) + "}"
            for a, kind in zip(args, spec, strict=True)
            if kind == "{"
        )
        if "{" not in spec:
            # An empty group ends the macro's name: pylatexenc would otherwise take the space after it
            # ("σ → 0") or the Unicode sub/superscript glued to it (\sum + ᵢ).
            out.append("{}")
    return i


def _math_environment(name: str, body: str, depth: int) -> str:
    """A matrix: "(a, b; c, d)" with its delimiters; aligned rows: "a = b; c = d"; an array's column
    spec and an alignat's column count are not printed."""
    base = name.rstrip("*")
    if base == "array":
        body = body[_args(body, 0, "[{")[1] :]
    elif base in ("alignat", "alignedat"):
        body = body[_args(body, 0, "{")[1] :]
    if base in _MATRICES:
        left, right = _MATRICES[base]
        return left + _cells(body, depth, math=True, joiner=", ") + right
    return " " + _cells(body, depth, math=True, joiner=" ") + " "


def _cells(body: str, depth: int, math: bool, joiner: str) -> str:
    """Rows ("\\\\") joined with "; ", their cells ("&") with ``joiner``; empty rows left out."""
    rows = []
    for row in _split_top(body, "\\\\"):
        cells = [
            (_math(cell, depth + 1) if math else _text_mode(cell, depth + 1)).strip()
            for cell in _split_top(row, "&")
        ]
        if any(cells):
            rows.append(joiner.join(cells))
    return "; ".join(rows)


def _split_top(s: str, separator: str) -> list[str]:
    """``s`` split at ``separator`` ("&" or "\\\\" with its optional ``[length]``) outside braces and
    nested environments."""
    parts, start, depth, i = [], 0, 0, 0
    while i < len(s):
        ch = s[i]
        if ch == "\\":
            if separator == "\\\\" and s.startswith("\\\\", i) and depth == 0:
                parts.append(s[start:i])
                i = start = _args(s, i + 2, "*[")[1]
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
_MATH_IN_TEXT = frozenset("sqrt frac dfrac tfrac binom ensuremath".split())
_TYPOGRAPHY = re.compile(r"---|--|``|''|(?P<approx>(?<![^\s(\[])~(?=\s*\d))|~|[{}]")
_TYPOGRAPHY_TEXT = {"---": "—", "--": "–", "``": "“", "''": "”", "~": " ", "{": "", "}": ""}


def latex_to_unicode(text: str) -> str:
    """Convert LaTeX markup in an abstract to plain Unicode text (see the module docstring)."""
    if _PRIVATE.search(text):
        return text  # our placeholder characters are already in the text: converting could garble it
    shelf = _Shelf()
    text = _VERBATIM.sub(lambda m: shelf.put(next(g for g in m.group(2, 4, 5) if g is not None)), text)
    text = _protect_urls(text, shelf)
    text = drop_macros(text)
    pieces, last = [], 0
    for start, end, content in find_math_spans(text):
        pieces.append(text[last:start])
        pieces.append(shelf.put(math_to_unicode(content)))
        last = end
    pieces.append(text[last:])
    return _words_spaced(shelf.restore(_text_mode("".join(pieces), 0)))


def _protect_urls(text: str, shelf: _Shelf, depth: int = 0) -> str:
    """``\\url{u}`` → u and ``\\href{u}{text}`` → "text (u)" (the text still LaTeX, its own links
    protected too), bare links: each URL kept as typed, out of the converter's reach."""
    if ("\\url" in text or "\\href" in text) and depth <= MAX_DEPTH:
        out, i = [], 0
        while (m := _URL_MACRO.search(text, i)) is not None:
            url, end = _take_arg(text, m.end())
            out.append(text[i : m.start()])
            if m.group(1) == "url":
                out.append(shelf.put(url))
            else:
                label, end = _take_arg(text, end)
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
        return _flatten(text)
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
    m = _MACRO.match(text, j)
    if m is None:  # a lone backslash at the very end: LaTeX prints nothing for it
        return len(text)
    name, k = m.group(1), m.end()
    if not name.isalpha():
        if name == "\\":  # a line break, with its optional star and length
            out.append(" ")
            return _args(text, k, "*[")[1]
        if name in _SPACES or name in _NOTHING:
            out.append(_SPACES.get(name, ""))
            return k
        if name in "%&#$_{}":
            out.append(name)
            return k
        if name in _ACCENT_MACROS:
            arg, k = _take_arg(text, k)
            out.append(_pylatexenc(f"\\{name}{{{arg}}}"))
            return k
        if name not in "()[]":  # an unmatched math delimiter prints nothing
            out.append(_pylatexenc(m.group(0)))
        return k
    if name == "begin":
        return _text_environment(text, j, k, out, depth)
    if name == "end":
        return _take_arg(text, k)[1]
    if name in ("def", "let"):
        return _skip_definition(text, name, k)
    spec = _argspec(name)
    if name in DROPPED:
        return _args(text, k, spec)[1]
    if name == "item":
        (label,), k = _args(text, k, "[")
        out.append(f" {_text_mode(label, depth + 1)} " if label is not None else " • ")
        return k
    if name in HEADINGS:
        (_, _, title), k = _args(text, k, "*[{")
        out.append(f" {_text_mode(title or '', depth + 1)} ")
        return k
    if name == "footnote":
        (_, note), k = _args(text, k, "[{")
        out.append(f" ({_text_mode(note or '', depth + 1).strip()})")
        return k
    if name in _MATH_IN_TEXT:
        end = _args(text, k, spec or "{")[1]
        out.append(math_to_unicode(text[j:end]))
        return end
    if name in OPERATORS:  # a math operator outside math: its word, apart from the words beside it
        out.append(f"{_WORD_OPEN}{name}{_WORD_CLOSE}")
        return k
    if name in _SYMBOLS or name in _SPACE_WORDS:
        out.append(_SYMBOLS.get(name, " "))
        return _skip_spaces(text, k)
    if (greek := _upright_greek(name)) is not None:
        out.append(_pylatexenc(f"\\{greek}"))
        return _skip_spaces(text, k)
    if name in KEEP_ARGUMENT or not _has_text_rule(name):
        # its arguments' text: a text macro's, an unknown macro's (none for one without: ``\ie``)
        spec = spec or ("{" if name in KEEP_ARGUMENT else "")
        args, k = _args(text, k, spec)
        printed = [a or "" for a, kind in zip(args, spec, strict=True) if kind == "{"]
        while not spec and k < len(text) and text[k] == "{":  # a user's macro: its braced arguments
            arg, k = _take_arg(text, k)
            printed.append(arg)
        printed = printed[-1:] if name in _LAST_ARGUMENT else printed
        out.append(" ".join(_text_mode(a, depth + 1) for a in printed))
        return k if printed or spec else _skip_spaces(text, k)
    end = _args(text, k, spec)[1]
    out.append(_pylatexenc(text[j:end]))
    return end if "{" in spec else _skip_spaces(text, end)  # TeX: a control word swallows the spaces after it


def _text_environment(text: str, j: int, k: int, out: list[str], depth: int) -> int:
    """``\\begin{name}`` at ``text[j]`` (its name read from ``k``): the body read as its kind is read."""
    name, k = _take_arg(text, k)
    body_end, after = _environment_end(text, k, name)
    base = name.rstrip("*")
    if base in MATH_ENVIRONMENTS or base in _MATRICES or base in _ROWS_ENVIRONMENTS:
        out.append(f" {math_to_unicode(text[j:after])} ")
    elif name in _TABLES:
        start = _args(text, k, _TABLES[name])[1]
        out.append(f" {_cells(text[start:body_end], depth, math=False, joiner=', ')} ")
    else:
        start = _args(text, k, _environment_argspec(name))[1]
        out.append(f" {_text_mode(text[start:body_end], depth + 1)} ")
    return after
