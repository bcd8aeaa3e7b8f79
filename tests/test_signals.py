"""signals.py: the quality signals of a cleaned abstract, and the contact details it holds."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpus_hygiene.signals import count_contacts, mask_contacts, repeated_ngram_share, signals_of, words


def test_words_count_chinese_and_japanese_characters_one_by_one_and_korean_by_spaces():
    assert words("BERT 模型很好") == ["bert", "模", "型", "很", "好"]
    assert words("モデルを学習") == ["モ", "デ", "ル", "を", "学", "習"]
    assert words("본 논문은 방법을 제안한다") == ["본", "논문은", "방법을", "제안한다"]


@given(
    st.one_of(
        st.text(max_size=80),
        st.text(alphabet=st.characters(max_codepoint=127), max_size=80),
        st.lists(
            st.sampled_from([*"aZ9_ -é", "हिन्दी", "模型", "\u0301", "ﬁ", "İ", "ß", "𝔘"]), max_size=20
        ).map("".join),
    )
)
def test_the_fast_word_patterns_find_the_words_the_general_one_finds(text):
    from corpus_hygiene.signals import _WORD

    folded = text.casefold()
    assert words(text) == _WORD(folded).findall(folded)


def test_signals_of_an_english_sentence():
    text = "We study the effect of noise on the training of large models."
    s = signals_of(text, "en")
    assert s.n_words == 12 and s.mean_word_length == pytest.approx(49 / 12)  # 49 letters in 12 words
    assert s.alpha_share == pytest.approx(49 / 50)  # 50 non-space characters: 49 letters, 1 full stop
    assert s.stopword_share == pytest.approx(6 / 12)  # we, the ×2, of ×2, on
    assert s.repeated_ngram_share == pytest.approx(4 / 12)  # no phrase repeats; "the" and "of" do, twice
    assert s.n_urls == 0 and s.pii == {"email": 0, "phone": 0}


def test_stop_word_share_is_null_where_wordfreq_has_no_word_list():
    assert signals_of("본 논문은 법률 문서에서 조항 간 참조 관계를 추출한다.", "ko").stopword_share is None
    assert signals_of("Text in an unknown language.", "und").stopword_share is None
    assert signals_of("我们的方法在数据集上的结果是最好的。", "zh").stopword_share > 0.2


def test_stop_words_are_the_languages_most_frequent_words_in_wordfreq():
    from wordfreq import available_languages, top_n_list

    from corpus_hygiene.signals import STOP_WORDS_PER_LANGUAGE, stop_words

    for lang in sorted(available_languages(wordlist="small")):
        if lang in ("ko", "ta"):
            continue
        best = top_n_list(lang, 4 * STOP_WORDS_PER_LANGUAGE, "best")
        if lang in ("zh", "ja"):
            assert stop_words(lang) == {w for w in best if len(w) == 1}, lang
        else:
            assert stop_words(lang) == set(best[:STOP_WORDS_PER_LANGUAGE]), lang


def test_the_longest_repeated_phrase_and_the_words_it_covers():
    assert repeated_ngram_share("we propose a model and we propose a loss".split()) == pytest.approx(6 / 9)
    assert repeated_ngram_share("one two three four".split()) == 0.0
    assert repeated_ngram_share([]) == 0.0
    assert repeated_ngram_share(("spam " * 500).split()) == 1.0


@given(st.lists(st.sampled_from("a b c d e".split()), max_size=60))
def test_repeated_share_is_a_share_and_zero_only_without_a_repeated_word(tokens):
    share = repeated_ngram_share(tokens)
    assert 0.0 <= share <= 1.0
    assert (share == 0.0) == (len(set(tokens)) == len(tokens))


def test_contacts_are_counted_and_masked_but_numbers_dois_and_addresses_are_not_phones():
    text = "Mail ada@lab.example.org, call +1 650 253 0000; see doi 10.1145/3292500.3330701, 192.168.10.20."
    assert count_contacts(text) == {"email": 1, "phone": 1}
    assert (
        mask_contacts(text) == "Mail [email], call [phone]; see doi 10.1145/3292500.3330701, 192.168.10.20."
    )
    for plain in ("in 2019-2023 we saw 1,234,567 users", "(2020) 555-0100 items", "+5 points on 12 tasks"):
        assert count_contacts(plain) == {"email": 0, "phone": 0}, plain


def test_links_are_counted():
    assert signals_of("Code at https://ex.org/a and www.ex.org/b, data at http://ex.org/c.", "en").n_urls == 3


def _brute_force_share(tokens):
    for n in range(len(tokens) // 2, 0, -1):
        starts = {}
        for i in range(len(tokens) - n + 1):
            starts.setdefault(tuple(tokens[i : i + n]), []).append(i)
        repeated = [s for s in starts.values() if len(s) > 1]
        if repeated:
            return len({i + k for s in repeated for i in s for k in range(n)}) / len(tokens)
    return 0.0


@given(st.lists(st.sampled_from("a b c".split()), max_size=40))
def test_repeated_share_equals_a_brute_force_search(tokens):
    assert repeated_ngram_share(tokens) == pytest.approx(_brute_force_share(tokens))


_MARKED = st.sampled_from("_ \u093f\u094d\u0915\U00011038\U00011013\u0301")  # Devanagari, Brahmi marks


@given(st.text(st.one_of(st.characters(), _MARKED), max_size=40))
def test_the_fast_marks_pattern_matches_as_the_full_one_on_any_text(text):
    from corpus_hygiene.unicode_marks import MarksPattern

    for template in (r"[\w{marks}]+", r"[^\w{marks}]+|_+", "[{marks}]"):
        pattern = MarksPattern(template)
        assert pattern(text).findall(text) == pattern.full.findall(text)
        if all(c <= "\uffff" for c in text):
            assert pattern(text) is pattern.bmp  # the bitmap class wherever it is exact
