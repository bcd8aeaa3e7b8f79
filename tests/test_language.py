import pytest

from corpus_hygiene.language.detect import detect_language


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
        "Nous présentons une méthode d'alignement de textes parallèles pour des langues peu dotées, "
        "fondée sur des plongements de phrases multilingues."
    )
    results = {detect_language(text) for _ in range(5)}
    assert len(results) == 1
    (result,) = results
    assert result.code == "fr"
    assert result.method == "langdetect"
    assert result.confidence > 0.9


def test_english_by_its_common_words_and_only_english():
    english = (
        "We show that the model learns the task from a few examples, and that this holds when the data "
        "is noisy; we also find that it is not the size of the model that matters."
    )
    found = detect_language(english)
    assert (found.code, found.confidence, found.method) == ("en", 1.0, "common_words")
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


def test_no_udhr_line_but_english_is_taken_for_english_by_its_common_words():
    from benchmarks.bench_language import UDHR, udhr_texts
    from corpus_hygiene.language.detect import _english_by_common_words, window

    if not UDHR.is_dir():
        pytest.skip("../shared/lid/udhr is not present")
    taken = {code for code, line in udhr_texts() if _english_by_common_words(window(line))}
    assert taken == {"en"}


def test_udhr_required_languages_never_below_seeded_langdetect(udhr):
    from benchmarks.bench_language import BUCKETS, REQUIRED, accuracy

    for lang in REQUIRED:
        for b in BUCKETS:
            if (lang, b) not in udhr:
                continue
            row = accuracy(udhr, lambda code, x, lang=lang, b=b: code == lang and x == b)
            assert row["project"] >= row["langdetect"], (lang, b, row)
