import pytest

from corpus_hygiene.language import detect_language


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


def test_chinese_abstract_with_english_terms_stays_chinese():
    assert detect_language("我们在 BERT 和 GPT-2 上评估了该方法，结果表明其性能优于基线。").code == "zh"
