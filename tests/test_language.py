import unicodedata

import pytest

from corpus_hygiene.language.detect import detect_language

from .conftest import SHARED


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("论文列表", "zh"),  # langdetect alone says ko
        ("ICLR 2026 论文列表", "zh"),
        ("論文一覧", "ja"),  # no kana: decided by the Japanese-only form 覧
        ("논문 목록", "ko"),
        ("Liste des articles", "fr"),
        ("Статьи", "ru"),
        ("Papers", "en"),
        ("accepted papers", "en"),
        ("Artículos aceptados", "es"),
        ("Akzeptierte Beiträge", "de"),
        ("Άρθρα", "el"),
        ("本文では新しい手法を提案する。", "ja"),
        ("我们提出了一种新的方法。", "zh"),
        ("", "und"),
        ("12345 !!!", "und"),
    ],
)
def test_script_first_then_statistics(text, code):
    assert detect_language(text).code == code


def test_long_latin_text_is_detected_and_deterministic():
    text = (
        "Wij presenteren een methode voor het uitlijnen van parallelle teksten voor talen met weinig "
        "middelen, gebaseerd op meertalige zinsinbeddingen."
    )
    results = {detect_language(text) for _ in range(5)}
    assert len(results) == 1
    (result,) = results
    assert result.code == "nl"
    assert result.method == "langdetect"
    assert result.confidence > 0.9


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (
            "We show that the model learns the task from a few examples, and that this holds when the data "
            "is noisy; we also find that it is not the size of the model that matters.",
            "en",
        ),
        (
            "Wir zeigen, dass das Modell die Aufgabe aus wenigen Beispielen lernt und dass dies auch bei "
            "verrauschten Daten gilt; es ist nicht die Größe des Modells, die zählt.",
            "de",
        ),
        (
            "Nous montrons que le modèle apprend la tâche à partir de quelques exemples, et que cela reste "
            "vrai sur des données bruitées ; ce n'est pas la taille du modèle qui compte.",
            "fr",
        ),
        (
            "Los resultados muestran que los modelos entrenados con estos datos son más robustos cuando los "
            "ejemplos están etiquetados por expertos, y que todo depende del tamaño del corpus.",
            "es",
        ),
        (
            "Mostramos que o modelo aprende a tarefa com poucos exemplos e que isso se mantém quando os "
            "dados são ruidosos; não é o tamanho do modelo que importa para os resultados.",
            "pt",
        ),
    ],
)
def test_the_main_languages_by_their_common_words(text, code):
    found = detect_language(text)
    assert (found.code, found.method) == (code, "common_words")
    decomposed = detect_language(unicodedata.normalize("NFD", text))  # marks apart: the same words
    assert (decomposed.code, decomposed.method) == (code, "common_words")


def test_languages_wordfreq_lacks_are_left_to_langdetect():
    # ASCII text of languages whose common words English shares ("a", "i", "at", "to") or wordfreq lacks
    for text, code in [
        ("Y mae gan bawb hawl i addysg a dylai hyn fod yn rhad ac am ddim yn y camau cyntaf o leiaf.", "cy"),
        (
            "Kami mengusulkan metode baru untuk mengklasifikasikan abstrak dan mengujinya pada tiga data.",
            "id",
        ),
        (
            "Tunapendekeza njia mpya ya kuainisha muhtasari wa kisayansi na tunaijaribu kwenye data tatu.",
            "sw",
        ),
    ]:
        found = detect_language(text)
        assert (found.code, found.method) == (code, "langdetect"), text


def test_chinese_abstract_with_english_terms_stays_chinese():
    assert detect_language("我们在 BERT 和 GPT-2 上评估了该方法，结果表明其性能优于基线。").code == "zh"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("এই", "bn"),  # a script only one of langdetect's languages uses: one word decides
        ("ਮਨੁੱਖੀ ਅਧਿਕਾਰਾਂ ਦਾ ਐਲਾਨ", "pa"),
        ("மனித உரிமைகள்", "ta"),
        ("Datganiad Cyffredinol o Hawliau Dynol", "cy"),  # no word list knows it: langdetect decides
        ("Haki za Binadamu", "sw"),
        ("Pagpapahayag ng mga Karapatan", "tl"),
    ],
)
def test_every_script_reaches_a_decision(text, code):
    assert detect_language(text).code == code


def test_a_script_no_rule_knows_goes_to_langdetect_not_straight_to_und():
    assert detect_language("ყველა ადამიანი იბადება თავისუფალი").method == "langdetect"  # Georgian


def test_boilerplate_before_the_abstract_does_not_decide_its_language():
    licence = (
        "This work is licensed under a Creative Commons Attribution 4.0 International License. Permission "
        "is granted to copy, distribute and adapt the work provided the original authors are credited. "
    )
    abstract = (
        "Wir stellen ein Verfahren zur automatischen Zusammenfassung wissenschaftlicher Texte vor, das auf "
        "großen Sprachmodellen beruht. In Experimenten mit drei Datensätzen übertrifft es bestehende "
        "Ansätze deutlich, insbesondere bei langen Dokumenten mit vielen Abschnitten."
    )
    assert detect_language(licence + abstract).code == "de"
    assert detect_language(abstract + " " + licence).code == "de"


@pytest.fixture(scope="module")
def udhr():
    from benchmarks.bench_language import UDHR, measure

    if not UDHR.is_dir():
        pytest.skip("../shared/lid/udhr is not present")
    return measure()["cells"]


def test_udhr_every_length_at_least_seeded_langdetect_and_long_paragraphs_right(udhr):
    from benchmarks.bench_language import BUCKETS, accuracy

    for b in BUCKETS:
        row = accuracy(udhr, lambda code, x, b=b: x == b)
        assert row["project"] >= row["langdetect"], (b, row)
    assert accuracy(udhr, lambda code, x: x == "> 200")["project"] >= 0.99
    assert accuracy(udhr, lambda code, x: x != "< 50")["project"] >= 0.99


def test_no_udhr_line_is_taken_for_another_language_by_its_common_words():
    from benchmarks.bench_language import UDHR, udhr_texts
    from corpus_hygiene.language.detect import COMMON_WORD_LANGUAGES, _by_common_words

    if not UDHR.is_dir():
        pytest.skip("../shared/lid/udhr is not present")
    pairs = {(code, found.code) for code, line in udhr_texts() if (found := _by_common_words(line))}
    assert {found for _, found in pairs} == COMMON_WORD_LANGUAGES  # each decides some of its own lines
    assert {(code, found) for code, found in pairs if code != found} == set()


def test_held_out_abstracts_are_taken_for_their_own_language_by_their_common_words():
    from benchmarks.corpora import load_pools
    from corpus_hygiene.language.detect import _by_common_words

    if not (SHARED / "corpora").is_dir():
        pytest.skip("../shared/corpora is not present")
    pools = {lang: texts for lang, texts in load_pools().items() if lang not in ("zh", "ja")}  # by script
    decided = [(lang, found.code, text) for lang, texts in pools.items() for text in texts
               if (found := _by_common_words(text))]  # fmt: skip
    # most abstracts need no langdetect: a window too thin to decide is read again whole
    share = {lang: sum(d[0] == lang for d in decided) / len(texts) for lang, texts in pools.items()}
    assert share["en"] > 0.99 and share["fr"] > 0.95 and share["pt"] > 0.9 and share["es"] > 0.8, share
    # a pool's text in another language (a German abstract among the English ones) is no miss: langdetect
    # reads it as we do
    wrong = [(lang, code, text[:60]) for lang, code, text in decided if code != lang and _top(text) != code]
    assert wrong == []


def _top(text: str) -> str:
    from corpus_hygiene.language.detect import _langdetect, window

    return _langdetect(window(text))[0][0]


def test_udhr_required_languages_never_below_seeded_langdetect(udhr):
    from benchmarks.bench_language import BUCKETS, REQUIRED, accuracy

    for lang in REQUIRED:
        for b in BUCKETS:
            if (lang, b) not in udhr:
                continue
            row = accuracy(udhr, lambda code, x, lang=lang, b=b: code == lang and x == b)
            assert row["project"] >= row["langdetect"], (lang, b, row)
