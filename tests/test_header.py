import pytest

from corpus_hygiene.ingest.header import parse_header


@pytest.mark.parametrize(
    ("line", "venue", "year", "label", "lang"),
    [
        ("ICLR 2026 Papers", "ICLR", 2026, "Papers", "en"),
        ("2025 AAAI accepted papers", "AAAI", 2025, "accepted papers", "en"),
        ("ICLR 2026 论文列表", "ICLR", 2026, "论文列表", "zh"),
        ("NeurIPS 2025 論文一覧", "NeurIPS", 2025, "論文一覧", "ja"),
        ("ACL 2024 논문 목록", "ACL", 2024, "논문 목록", "ko"),
        ("Liste des articles — TALN 2025", "TALN", 2025, "Liste des articles", "fr"),
        ("Статьи EMNLP 2025", "EMNLP", 2025, "Статьи", "ru"),
        ("# 2025 AAAI accepted papers", "AAAI", 2025, "accepted papers", "en"),
        ("\ufeffCVPR 2024: Accepted Papers", "CVPR", 2024, "Accepted Papers", "en"),
        ("ICML 2023", "ICML", 2023, "", "und"),
        ("2024 年 EMNLP 論文リスト", "EMNLP", 2024, "年 論文リスト", "ja"),
        ("ICLR-2026 accepted papers", "ICLR", 2026, "accepted papers", "en"),
        ("Liste der Beiträge, CVPR 2025", "CVPR", 2025, "Liste der Beiträge", "de"),
        ("قائمة أوراق ICLR 2026", "ICLR", 2026, "قائمة أوراق", "ar"),
        ("רשימת מאמרים ICML 2024", "ICML", 2024, "רשימת מאמרים", "he"),
    ],
)
def test_venue_year_and_label_in_any_order_and_language(line, venue, year, label, lang):
    header = parse_header(line, 1)
    assert header is not None
    assert (header.venue, header.year, header.label, header.label_lang) == (venue, year, label, lang)


def test_year_without_a_venue_is_still_a_header_with_no_venue():
    header = parse_header("Accepted papers 2024", 1)
    assert (header.venue, header.year, header.label) == (None, 2024, "Accepted papers")


@pytest.mark.parametrize(
    "line",
    [
        "We present TideNet, a recurrent architecture for forecasting coastal water levels from gauges.",
        "Deep learning has changed NLP",  # no year
        "In 2020 we released a model that beat BERT on every benchmark we tried.",  # a sentence
        "The accuracy rose by 2024.5 points",  # not a year
        "x" * 300,
        "",
    ],
)
def test_prose_and_lines_without_a_year_are_not_headers(line):
    assert parse_header(line, 1) is None
