r"""The loss guard: words that cleaning removed although they were not markup.

The inventory is taken from the text as the markup steps receive it (after ftfy's encoding repair,
which fixes characters, never words) and compared with the cleaned text. Markup removal may drop
only what LaTeX never prints: command names (``\texttt``, ``\alpha``: the name, not its argument),
the macros of ``latex.DROPPED`` with their arguments (citation keys, labels), braces and math
delimiters. Every other word must still be in the cleaned text, where it is looked for folded
(NFKD, combining marks and case removed, letters and digits only), so that ``x_{ij}`` → ``xᵢⱼ``,
``intro- duce`` → ``introduce`` and ``\"o`` → ``ö`` keep their words.

>>> lost_words(r"Explanatory GRPO (\texttt{EXGRPO}) uses", "Explanatory GRPO () uses")
('EXGRPO',)
>>> lost_words(r"the $\mathcal{L}_{ij}$ loss \cite{smith20}", "the ℒᵢⱼ loss")
()
"""

from __future__ import annotations

import re
import unicodedata

from corpus_hygiene.clean.latex import DROPPED_MACRO

_COMMAND = re.compile(r"\\[A-Za-z]+")
_WORD = re.compile(r"[^\W_]+")
_NOT_ALNUM = re.compile(r"[\W_]+")


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _NOT_ALNUM.sub("", bare.casefold())


def lost_words(before: str, after: str) -> tuple[str, ...]:
    """The distinct words of ``before`` that are not markup and are missing from ``after``, in order."""
    if before.split() == after.split():
        return ()  # only whitespace changed (the common case: most records carry no markup)
    prose = _COMMAND.sub(" ", DROPPED_MACRO.sub(" ", before))
    folded = _fold(after)
    return tuple(w for w in dict.fromkeys(_WORD.findall(prose)) if _fold(w) not in folded)
