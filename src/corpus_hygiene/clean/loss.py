r"""The loss guard: words that cleaning removed although they were not markup.

The inventory is taken from the text as the markup steps receive it (after ftfy's encoding repair,
which fixes characters, never words) and compared with the cleaned text. Markup removal may drop
only what LaTeX never prints: command names (``\texttt``, ``\alpha``: the name, not its argument),
the macros of ``latex.DROPPED`` with their arguments (citation keys, labels), environment names and
their arguments (a table's column spec), braces and math delimiters. Every other word must still be
in the cleaned text, where it is looked for folded (NFKD, combining marks and case removed, letters
and digits only), so that ``x_{ij}`` → ``xᵢⱼ``, ``intro- duce`` → ``introduce`` and ``\"o`` → ``ö``
keep their words.

>>> lost_words(r"Explanatory GRPO (\texttt{EXGRPO}) uses", "Explanatory GRPO () uses")
('EXGRPO',)
>>> lost_words(r"the $\mathcal{L}_{ij}$ loss \cite{smith20}", "the ℒᵢⱼ loss")
()
"""

from __future__ import annotations

import re
import unicodedata

from corpus_hygiene.clean.latex.arguments import drop_macros

_COMMAND = re.compile(r"\\[A-Za-z]+")
_WORD = re.compile(r"[^\W_]+")
_NOT_ALNUM = re.compile(r"[\W_]+")


# Signs that carry a number NFKD does not spell out: a cube root is the index 3 of ``\sqrt[3]``.
_SIGN_DIGITS = str.maketrans({"∛": "3", "∜": "4"})


def _fold(text: str) -> str:
    """NFKD splits off accents and compatibility forms (ᵢ → i, ℒ → L); combining marks are not
    alphanumeric, so removing everything but letters and digits drops them too."""
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKD", text.translate(_SIGN_DIGITS)).casefold())


def lost_words(before: str, after: str) -> tuple[str, ...]:
    """The distinct words of ``before`` that are not markup and are missing from ``after``, in order."""
    words = _WORD.findall(_COMMAND.sub(" ", drop_macros(before, delimiters=True)))
    # Most words come through as they were: only the others are looked for in the folded text.
    missing = {w for w in set(words).difference(_WORD.findall(after)) if w not in after}
    if not missing:
        return ()
    folded = _fold(after)
    return tuple(w for w in dict.fromkeys(words) if w in missing and _fold(w) not in folded)
