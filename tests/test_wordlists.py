"""wordlists: wordfreq's answers, without wordfreq's whole lists kept in memory."""

import random
import subprocess
import sys

import marisa_trie
import pytest
from hypothesis import given
from hypothesis import strategies as st
from wordfreq import get_frequency_list, top_n_list, zipf_frequency

from corpus_hygiene.wordlists import _buckets, top_words, trie_folder, zipf

LISTS = [("en", "best"), ("de", "best"), ("hr", "best"), ("nb", "best"), ("fr", "small"), ("vi", "small")]


@pytest.mark.parametrize(("lang", "wordlist"), LISTS)  # hr: wordfreq's nearest list ("sh"); nb: 798 buckets
def test_zipf_is_wordfreqs_own_on_words_of_every_bucket(lang, wordlist):
    rng = random.Random(0)
    buckets = get_frequency_list(lang, wordlist)
    words = [w for bucket in buckets if bucket for w in rng.sample(bucket, min(2, len(bucket)))]
    words += [w.capitalize() for w in words[::7]] + [w + "zq" for w in words[::5]] + ["a-b", "x2024", ""]
    assert [zipf(w, lang, wordlist) for w in words] == [zipf_frequency(w, lang, wordlist) for w in words]
    assert zipf(buckets[-1][0], lang, wordlist) > 0 and zipf("qzxwv" * 3, lang, wordlist) == 0.0


@given(st.text(alphabet=st.characters(categories=["L", "Nd", "Pd", "Zs"]), max_size=14))
def test_zipf_is_wordfreqs_own_on_any_string(word):
    assert zipf(word, "en") == zipf_frequency(word, "en")


@pytest.mark.parametrize(("lang", "n"), [("en", 100), ("zh", 400), ("de", 1)])
def test_top_words_are_wordfreqs_top_n_list(lang, n):
    assert top_words(lang, n) == top_n_list(lang, n)


def test_a_run_keeps_none_of_wordfreqs_lists():
    probe = (
        "from corpus_hygiene.clean.pdf import join_split_words, join_letter_spacing;"
        "from corpus_hygiene.signals import signals_of;"
        "from corpus_hygiene.language.detect import detect_language;"
        "assert join_split_words('we intro- duce state- space models', 'de') == "
        "'we introduce state-space models', 'no join';"
        "assert join_letter_spacing('the A B S T R A C T', 'en') == 'the ABSTRACT', 'no join';"
        "assert signals_of('Wir zeigen, dass das Modell die Aufgabe lernt.', 'de').stopword_share == 0.5;"
        "assert detect_language('Liste des articles').code == 'fr';"
        "from checks import load_policy;"
        "from corpus_hygiene.dedup.similarity import lsh_shingles;"
        "assert 'the' not in lsh_shingles('the model and the data', load_policy().dedup_config());"
        "from wordfreq import get_frequency_dict, get_frequency_list;"
        "print(get_frequency_dict.cache_info().currsize, get_frequency_list.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "0"]


@pytest.fixture
def fresh_tries(monkeypatch, tmp_path):
    """Tries read anew from a cache folder of this test's."""

    def forget():
        _buckets.cache_clear()
        zipf.cache_clear()

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    forget()
    yield forget
    monkeypatch.undo()
    forget()


def test_a_trie_is_stored_once_read_from_its_file_after_and_rebuilt_when_damaged(fresh_tries):
    words = ["the", "model", "données", "qzxwv"]
    expected = [zipf_frequency(w, "fr", "small") for w in words]
    assert [zipf(w, "fr", "small") for w in words] == expected
    path = trie_folder() / "fr-small.marisa"
    stored = path.read_bytes()
    assert marisa_trie.BytesTrie().mmap(str(path)).get("données")
    path.write_bytes(marisa_trie.BytesTrie([("model", b"\x00\x00")]).tobytes())  # bucket 0: zipf 9
    fresh_tries()
    assert zipf("model", "fr", "small") == 9.0  # the file is what a process reads
    path.write_bytes(stored[: len(stored) // 2])
    fresh_tries()
    assert [zipf(w, "fr", "small") for w in words] == expected  # rebuilt, and stored whole again
    assert path.read_bytes() == stored


def test_an_unwritable_cache_folder_costs_the_build_only(fresh_tries, monkeypatch, tmp_path):
    (tmp_path / "a file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a file"))
    assert zipf("model", "en", "small") == zipf_frequency("model", "en", "small")


def test_a_relative_cache_folder_is_ignored_and_without_a_home_nothing_is_stored(
    fresh_tries, monkeypatch, tmp_path
):
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert trie_folder().is_relative_to(tmp_path / "home" / ".cache")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("os.path.expanduser", lambda path: path)  # no home to expand "~" to
    assert trie_folder() is None
    assert zipf("model", "en", "small") == zipf_frequency("model", "en", "small")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written to the working folder
