"""langdetect_detector: langdetect's own answers, to the last bit, from its profiles held in one array."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langdetect import DetectorFactory
from langdetect.detector_factory import PROFILES_DIRECTORY
from langdetect.lang_detect_exception import LangDetectException

from corpus_hygiene.language import langdetect_detector
from corpus_hygiene.language.detect import PREFIX_CHARS
from corpus_hygiene.language.langdetect_detector import ArrayDetector

from .conftest import SHARED

TEXTS = [
    "We propose a sparse attention scheme whose cost grows linearly with the length of the input.",
    "Nous proposons une méthode d'alignement fondée sur des plongements de phrases multilingues.",
    "Wir stellen ein Verfahren vor, das große Sprachmodelle über Ländergrenzen hinweg vergleicht.",
    "Proponemos un método que reduce el coste de la atención en textos largos, sin pérdida de calidad.",
    "Propomos um método de avaliação de modelos de linguagem em português europeu e brasileiro.",
    "Această lucrare descrie o metodă de învățare șiși țintă",  # ș and ț: langdetect's Romanian mapping
    "Chúng tôi đề xuất một phương pháp mới cho bài toán dịch máy",  # Vietnamese: combining-mark folding
    "THE NASA AND ESA DATA, see https://example.org/x?y=1 or mail someone@example.org — 2026!!",
    "Мы предлагаем новый метод обучения языковых моделей на малых данных.",
    "我们提出了一种新的方法 based on BERT，在三个数据集上取得了最好的结果。",
    "ICLR 2026 — “quoted” words…   and   spaces",
]


@pytest.fixture(scope="module")
def plain():
    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(0)
    return factory


def answers(make, text: str, trials: int):
    detector = make()
    detector.n_trial = trials
    detector.append(text)
    try:
        return [(p.lang, p.prob) for p in detector.get_probabilities()]
    except LangDetectException as exc:
        return str(exc)


def both(plain, text: str, trials: int = 1):
    return answers(plain.create, text, trials), answers(lambda: ArrayDetector(0), text, trials)


def test_the_table_holds_langdetects_profiles(plain):
    loaded, table = langdetect_detector._factory()
    assert loaded.langlist == plain.langlist
    grams = [g for g in plain.word_lang_prob_map if 1 <= len(g) <= 3]
    assert set(grams) == set(loaded.word_lang_prob_map)
    assert all(table[loaded.word_lang_prob_map[g]].tolist() == plain.word_lang_prob_map[g] for g in grams)


@pytest.mark.parametrize("trials", [1, 7])
@pytest.mark.parametrize("text", TEXTS)
def test_same_probabilities_as_langdetect(plain, text, trials):
    ours, theirs = both(plain, text, trials)
    assert ours == theirs
    assert isinstance(ours, list) and ours


def test_no_features_is_langdetects_error(plain):
    assert both(plain, "12345 !!! ---") == ("No features in text.", "No features in text.")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(categories=["Lu", "Ll", "Lo", "Mn", "Nd", "P", "Zs"]), max_size=80))
def test_same_ngrams_and_probabilities_on_any_text(plain, text):
    theirs = plain.create()
    theirs.append(text)
    ours = ArrayDetector(0)
    ours.append(text)
    theirs.cleaning_text()
    ours.cleaning_text()
    assert ours.text == theirs.text
    rows = langdetect_detector._factory()[0].word_lang_prob_map
    assert ours._extract_ngrams() == [rows[g] for g in theirs._extract_ngrams()]
    left, right = both(plain, text)
    assert left == right


@pytest.mark.skipif(not (SHARED / "corpora").is_dir(), reason="../shared/corpora is absent")
def test_same_probabilities_on_real_abstracts(plain):
    from benchmarks.corpora import load_pools

    prefixes = [text[:PREFIX_CHARS] for texts in load_pools().values() for text in texts[:300]]
    assert len(prefixes) > 1400
    assert [p for p in prefixes if (pair := both(plain, p))[0] != pair[1]] == []
