"""Text cleaning: a fixed sequence of named ``str -> str`` fixes, each recorded when it changes text.

The order matters and is part of the contract: encoding repair must see the bytes-as-decoded text,
markup is removed before PDF artefacts are joined, and normalisation runs last so every earlier fix
can rely on seeing the original whitespace.
"""

from __future__ import annotations

from collections.abc import Callable

from corpus_hygiene.clean.normalise import collapse_whitespace, remove_invisible_chars, to_nfc
from corpus_hygiene.models import Cleaned

Fix = Callable[[str], str]

# (name recorded in ``fixes``, function). Later issues insert encoding, markup and PDF fixes here.
PIPELINE: tuple[tuple[str, Fix], ...] = (
    ("unicode_nfc", to_nfc),
    ("invisible_chars", remove_invisible_chars),
    ("whitespace", collapse_whitespace),
)


def clean_text(text: str) -> Cleaned:
    """Run every fix in order; ``fixes`` names those that changed the text.

    >>> clean_text(" Déja\\u0301\\u00a0vu ").fixes
    ('unicode_nfc', 'whitespace')
    """
    fixes = []
    for name, fix in PIPELINE:
        fixed = fix(text)
        if fixed != text:
            fixes.append(name)
            text = fixed
    return Cleaned(text=text, fixes=tuple(fixes))
