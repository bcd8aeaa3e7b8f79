"""Math → Unicode: sub- and superscripts, fractions, roots, accents, operators, matrices."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from corpus_hygiene.clean.latex.arguments import (
    MACRO,
    argspec,
    environment_end,
    read_args,
    table_cells,
    take_arg,
)
from corpus_hygiene.clean.latex.markup import (
    DROPPED,
    KEEP_ARGUMENT,
    LAST_ARGUMENT,
    MATRICES,
    MAX_DEPTH,
    NOTHING,
    OPERATORS,
    SIZING,
    SPACE_WORDS,
    SPACES,
    SYMBOLS,
    WORD_CLOSE,
    WORD_OPEN,
    flatten,
    has_text_rule,
    pylatexenc_text,
    upright_greek,
)

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

ACCENTS = {  # combining characters; NFC later composes what has a precomposed form (O + ̃ → Õ)
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
_WORD_AFTER = re.compile(f"(?<=[^\\W_])(?<![{_SCRIPT_CHARS}]){WORD_OPEN}")
_WORD_BEFORE = re.compile(f"{WORD_CLOSE}(?=[^\\W_])(?![{_SCRIPT_CHARS}])")


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


def words_spaced(text: str) -> str:
    """An operator's word stands apart from a letter or digit beside it ("n log n", "sin θ"), not from
    brackets or its own sub/superscripts ("log(x)", "maxₓ")."""
    if WORD_OPEN not in text and WORD_CLOSE not in text:
        return text
    text = text.replace(WORD_CLOSE + WORD_OPEN, " ")
    text = _WORD_BEFORE.sub(" ", _WORD_AFTER.sub(" ", text))
    return text.replace(WORD_OPEN, "").replace(WORD_CLOSE, "")


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
        return flatten(s)
    return words_spaced(unicodedata.normalize("NFC", pylatexenc_text(_math_pass(s, depth))))


def _math_pass(s: str, depth: int) -> str:
    """Rewrite what pylatexenc renders poorly; leave the rest for it."""
    if depth > MAX_DEPTH:
        return flatten(s)
    s = re.sub(r"\^\s*\{?\s*\\circ\s*\}?", "°", s)
    out: list[str] = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch in "^_":
            arg, i = take_arg(s, i + 1, with_args=True)
            out.append(_script(ch, _math(arg, depth + 1)))
        elif ch == "{":
            arg, i = take_arg(s, i)
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
    m = MACRO.match(s, i)
    if m is None:  # a lone backslash at the very end
        return len(s)
    name, i = m.group(1), m.end()
    if not name.isalpha():
        if name == "\\":
            out.append("; ")
            return read_args(s, i, "*[")[1]
        out.append(SPACES.get(name, "") if name in SPACES or name in NOTHING else m.group(0))
        return i
    if name in DROPPED or name == "end":
        return read_args(s, i, "{" if name == "end" else argspec(name))[1]
    if name in SIZING:
        return i
    rule = _MATH_RULES.get(name) or _by_class(name)
    text, i = rule(s, i, name, depth)
    out.append(text)
    return i


def _begin(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    env, i = take_arg(s, i)
    body_end, after = environment_end(s, i, env)
    return _math_environment(env, s[i:body_end], depth), after


def _accent(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    arg, i = take_arg(s, i)
    # on each letter of a longer argument ("\overline{AB}" A̅B̅): the mark spans them all
    return "".join(ch + ACCENTS[name] if not ch.isspace() else ch for ch in _math(arg, depth + 1)), i


def _fraction(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    (num, den), i = read_args(s, i, "{{")
    return f"{_wrap(_math(num, depth + 1))}/{_wrap(_math(den, depth + 1))}", i


def _binomial(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    (top, bottom), i = read_args(s, i, "{{")
    return f"C({_math(top, depth + 1)}, {_math(bottom, depth + 1)})", i


def _sqrt(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    (index, radicand), i = read_args(s, i, "[{")
    return _root(index, radicand or "", depth), i


def _stacked(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    (script, base), i = read_args(s, i, "{{")
    below = "_" if name == "underset" else "^"
    return _math(base or "", depth + 1) + _script(below, _math(script or "", depth + 1)), i


def _long_arrow(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    (_, over), i = read_args(s, i, "[{")
    arrow = "→" if name == "xrightarrow" else "←"
    return arrow + (_script("^", _math(over, depth + 1)) if over else ""), i


def _modulo(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    arg, i = take_arg(s, i)
    inner = _math(arg, depth + 1)
    return {"pmod": f" (mod {inner})", "mod": f" mod {inner}", "pod": f" ({inner})"}[name], i


def _operator_name(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    (_, arg), i = read_args(s, i, "*{")
    return f"{WORD_OPEN}{_math(arg or '', depth + 1)}{WORD_CLOSE}", i


_MATH_RULES = {
    "begin": _begin,
    **dict.fromkeys(ACCENTS, _accent),
    **dict.fromkeys(("frac", "dfrac", "tfrac", "cfrac"), _fraction),
    **dict.fromkeys(("binom", "dbinom", "tbinom"), _binomial),
    "sqrt": _sqrt,
    **dict.fromkeys(("underset", "overset", "stackrel"), _stacked),
    **dict.fromkeys(("xrightarrow", "xleftarrow"), _long_arrow),
    **dict.fromkeys(("pmod", "mod", "pod"), _modulo),
    "operatorname": _operator_name,
}


def _by_class(name: str):
    """The rule of a macro no rule names: by the class it is in."""
    if name in OPERATORS:
        return lambda s, i, name, depth: (f"{WORD_OPEN}{name}{WORD_CLOSE}", i)
    if name in KEEP_ARGUMENT:
        return _keep_arguments
    if name in SYMBOLS or name in SPACE_WORDS:
        return lambda s, i, name, depth: (SYMBOLS.get(name, " "), i)
    if (greek := upright_greek(name)) is not None:
        return lambda s, i, name, depth: (f"\\{greek}{{}}", i)
    return _unknown if not has_text_rule(name) else _pylatexenc_macro


def _keep_arguments(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    spec = argspec(name) or "{"
    args, i = read_args(s, i, spec)
    texts = [a or "" for a, kind in zip(args, spec, strict=True) if kind == "{"]
    return "".join(_math_pass(a, depth + 1) for a in (texts[-1:] if name in LAST_ARGUMENT else texts)), i


def _unknown(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    spec = argspec(name)
    args, i = read_args(s, i, spec)
    texts = [a or "" for a, kind in zip(args, spec, strict=True) if kind == "{"]
    if not texts:
        return f"{WORD_OPEN}{name}{WORD_CLOSE}", i  # \argmax, \softmax: an operator's name
    return "".join(_math_pass(a, depth + 1) for a in texts), i


def _pylatexenc_macro(s: str, i: int, name: str, depth: int) -> tuple[str, int]:
    # \mathbb{R}, \mathcal{O}: pylatexenc's own macros, their arguments kept for it
    spec = argspec(name)
    args, i = read_args(s, i, spec)
    kept = "".join(
        "{" + _math_pass(a or "", depth + 1) + "}" for a, kind in zip(args, spec, strict=True) if kind == "{"
    )
    # An empty group ends the macro's name: pylatexenc would otherwise take the space after it ("σ → 0")
    # or the Unicode sub/superscript glued to it (\sum + ᵢ).
    return f"\\{name}" + kept + ("{}" if "{" not in spec else ""), i


def _math_environment(name: str, body: str, depth: int) -> str:
    """A matrix: "(a, b; c, d)" with its delimiters; aligned rows: "a = b; c = d"; an array's column
    spec and an alignat's column count are not printed."""
    base = name.rstrip("*")
    if base == "array":
        body = body[read_args(body, 0, "[{")[1] :]
    elif base in ("alignat", "alignedat"):
        body = body[read_args(body, 0, "{")[1] :]
    if base in MATRICES:
        left, right = MATRICES[base]
        return left + table_cells(body, lambda cell: _math(cell, depth + 1), ", ") + right
    return " " + table_cells(body, lambda cell: _math(cell, depth + 1), " ") + " "
