"""wordfreq's word lists, looked up without keeping them whole.

wordfreq caches every list it reads for the life of the process (``get_frequency_list``), and
``zipf_frequency`` builds a dict of it beside (``get_frequency_dict``): a worker kept the "best" list
of every language it met, for the few hundred words it looks up. Here a list is read with wordfreq's
own reader, uncached, and kept only as what is needed of it: its top words, or a trie of word →
frequency bucket (marisa-trie). A trie is built once a machine and memory-mapped from the user's cache
folder after that: building one costs far more than mapping it, and every process reads the lists.
"""

from __future__ import annotations

import contextlib
import os
from functools import cache, lru_cache
from importlib.metadata import version
from itertools import chain, islice
from pathlib import Path

import marisa_trie
from wordfreq import cB_to_zipf, get_frequency_list, lossy_tokenize, smash_numbers, zipf_frequency
from wordfreq.numbers import has_digit_sequence

from corpus_hygiene.atomic import write_atomic


def _read(lang: str, wordlist: str) -> list[list[str]]:
    """The list's buckets, most frequent first (wordfreq maps a code it lacks to its nearest list)."""
    return get_frequency_list.__wrapped__(lang, wordlist)


def top_words(lang: str, n: int, wordlist: str = "best") -> list[str]:
    """``wordfreq.top_n_list(lang, n, wordlist)``, the list not kept."""
    words = chain.from_iterable(_read(lang, wordlist))
    return list(islice((w for w in words if not has_digit_sequence(w)), n))


@cache
def _makers() -> str:
    """The versions that make a trie's bytes (each lookup scans the installed distributions)."""
    return f"wordfreq-{version('wordfreq')}-marisa-{version('marisa-trie')}"


def trie_folder() -> Path | None:
    """Where built tries are kept, per ``_makers``: XDG's cache folder; None when it is not an absolute
    path (a relative XDG_CACHE_HOME is ignored, as XDG says; no home)."""
    home = os.environ.get("XDG_CACHE_HOME", "")
    home = home if os.path.isabs(home) else os.path.expanduser("~/.cache")
    return Path(home, "corpus-hygiene", _makers()) if os.path.isabs(home) else None


@cache
def _buckets(lang: str, wordlist: str) -> marisa_trie.BytesTrie:
    """word → bucket (the word's frequency in centibels below 0), as two big-endian bytes, so that bytes
    order is number order. Read from the cache folder; a file missing or unreadable there is built again
    (and stored when the folder is writable: a read-only home only costs the build)."""
    folder = trie_folder()
    path = folder / f"{lang}-{wordlist}.marisa" if folder else None
    if path:
        with contextlib.suppress(OSError, RuntimeError):  # missing, unreadable, damaged: built again
            return marisa_trie.BytesTrie().mmap(str(path))
    buckets = [(i.to_bytes(2, "big"), words) for i, words in enumerate(_read(lang, wordlist))]
    trie = marisa_trie.BytesTrie((word, bucket) for bucket, words in buckets for word in words)
    if path:
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, trie.tobytes())
    return trie


@lru_cache(maxsize=65536)
def zipf(word: str, lang: str, wordlist: str = "best") -> float:
    """``wordfreq.zipf_frequency(word, lang, wordlist)``. A word wordfreq splits into several tokens, or
    whose digits it folds, is left to wordfreq: it combines their frequencies."""
    tokens = lossy_tokenize(word, lang)
    if len(tokens) != 1 or smash_numbers(tokens[0]) != tokens[0]:
        return zipf_frequency(word, lang, wordlist)
    found = _buckets(lang, wordlist).get(tokens[0])
    # a word in two buckets: wordfreq keeps the last (the larger number)
    return cB_to_zipf(-int.from_bytes(max(found), "big")) if found else 0.0
