import codecs

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from corpus_hygiene.ingest.decode import BinaryContent, decode_bytes

from .conftest import SHARED

UDHR = SHARED / "lid" / "udhr"
needs_udhr = pytest.mark.skipif(not UDHR.is_dir(), reason="../shared/lid/udhr is not present")

TEXT = "ICLR 2026 论文列表\n\n“Quoted” naïve café — 本文では手法を提案する。\n"


@pytest.mark.parametrize(
    ("bom", "codec", "expected_encoding"),
    [
        (codecs.BOM_UTF8, "utf-8", "utf_8_sig"),
        (codecs.BOM_UTF16_LE, "utf-16-le", "utf_16"),
        (codecs.BOM_UTF16_BE, "utf-16-be", "utf_16"),
        (codecs.BOM_UTF32_LE, "utf-32-le", "utf_32"),
        (codecs.BOM_UTF32_BE, "utf-32-be", "utf_32"),
    ],
)
def test_bom_decides_the_encoding_and_is_removed(bom, codec, expected_encoding):
    decoded = decode_bytes(bom + TEXT.encode(codec))
    assert decoded.text == TEXT
    assert decoded.encoding == expected_encoding
    assert decoded.confidence == 1.0
    assert decoded.repairs[0] == "bom"


def test_strict_utf8_without_bom():
    decoded = decode_bytes(TEXT.encode("utf-8"))
    assert (decoded.text, decoded.encoding, decoded.repairs) == (TEXT, "utf_8", ())


def test_cp1252_curly_quotes_are_not_read_as_latin1_controls():
    raw = "ICLR 2025 Papers\n\nWe call this the \u201cinverse\u201d problem \u2014 it\u2019s na\u00efve.\n"
    decoded = decode_bytes(raw.encode("cp1252"))
    assert decoded.encoding == "cp1252"
    assert decoded.text == raw
    assert not any("\x80" <= ch <= "\x9f" for ch in decoded.text)


def test_gb18030_chinese_is_detected():
    raw = (
        "ICLR 2026 论文列表\n\n图神经网络在分子性质预测任务中表现突出，但其预测结果往往缺乏可解释性。"
        "本文设计了一种子结构注意力机制，能够在预测的同时给出对结果贡献最大的化学官能团。\n"
    )
    decoded = decode_bytes(raw.encode("gb18030"))
    assert decoded.text == raw
    assert decoded.encoding == "gb18030"
    assert decoded.confidence > 0.8


def test_utf16_without_bom_is_recognised_from_its_nul_pattern():
    decoded = decode_bytes(TEXT.encode("utf-16-le"))
    assert decoded.text == TEXT
    assert decoded.encoding == "utf_16_le"
    assert "utf16_without_bom" in decoded.repairs


def test_sequence_cut_off_at_end_of_file_is_repaired_and_recorded():
    data = TEXT.encode("utf-8") + "论".encode()[:2]
    decoded = decode_bytes(data)
    assert decoded.text == TEXT + "\ufffd"
    assert decoded.encoding == "utf_8"
    assert decoded.repairs == ("truncated_tail",)


def test_odd_byte_at_end_of_utf16_is_dropped_and_recorded():
    decoded = decode_bytes(codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le") + b"\x41")
    assert decoded.text == TEXT
    assert decoded.repairs == ("bom", "truncated_tail")


def test_stray_cp1252_byte_in_utf8_file_keeps_utf8():
    data = ("Überraschend gute Ergebnisse für 论文 " * 20).encode("utf-8") + b" caf\xe9 " + b"ok " * 50
    decoded = decode_bytes(data)
    assert decoded.encoding == "utf_8"
    assert "café" in decoded.text and "Überraschend" in decoded.text
    assert decoded.repairs == ("invalid_utf8_bytes_as_cp1252:1",)


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x01\x02\x03binary\x00\xff\xfe\x00\x10" * 50,
        b"%PDF-1.4\n" + bytes(range(256)) * 8,
        b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(200),
    ],
)
def test_binary_content_is_refused(data):
    with pytest.raises(BinaryContent):
        decode_bytes(data)


def test_text_full_of_control_characters_is_binary():
    with pytest.raises(BinaryContent, match="control characters"):
        decode_bytes(("abc\x01\x02\x03\x04" * 100).encode("ascii"))


@given(st.binary(max_size=3000))
def test_decoding_arbitrary_bytes_never_raises_anything_but_binary_content(data):
    try:
        decoded = decode_bytes(data)
    except BinaryContent:
        return
    assert isinstance(decoded.text, str)
    assert 0.0 <= decoded.confidence <= 1.0


@given(st.text(max_size=2000))
def test_any_utf8_text_round_trips(text):
    # NULs between characters are UTF-16's byte pattern: such text is the wide-encoding tests' subject
    assume("\x00" not in text)
    try:
        decoded = decode_bytes(text.encode("utf-8"))
    except BinaryContent:
        return  # text that is mostly control characters
    assert decoded.text == (text[1:] if text.startswith("\ufeff") else text)


def test_mojibake_full_of_c1_characters_is_text_not_binary():
    mojibake = "".join(
        bytes([b]).decode("cp1252", errors="ignore") or chr(b)
        for b in ("图神经网络在分子性质预测" * 20).encode("utf-8")
    )
    assert sum("\x80" <= c <= "\x9f" for c in mojibake) > 0.01 * len(mojibake)
    decoded = decode_bytes(("ICLR 2026 Papers\n\n" + mojibake).encode("utf-8"))
    assert decoded.encoding == "utf_8" and mojibake in decoded.text


WIDE_TEXTS = {
    "en": "ICLR 2026 Papers\n\nWe study graph neural networks for molecules and report every result.\n",
    "zh": "ICLR 2026 论文列表\n\n我们提出了一种新的图神经网络方法，并在四个基准数据集上验证了其有效性。\n",
}


@pytest.mark.parametrize("codec", ["utf_16_le", "utf_16_be", "utf_32_le", "utf_32_be"])
@pytest.mark.parametrize("lang", sorted(WIDE_TEXTS))
def test_utf16_and_utf32_without_bom_are_read_in_english_and_chinese(codec, lang):
    """Where the NUL bytes fall tells UTF-32 and UTF-16 apart, even in Chinese (NULs only from spaces,
    digits, line breaks, and 一 = U+4E00 on the other side); these were quarantined as binary."""
    decoded = decode_bytes(WIDE_TEXTS[lang].encode(codec))
    assert (decoded.text, decoded.encoding) == (WIDE_TEXTS[lang], codec)
    assert decoded.repairs == ((codec[:3] + codec[4:6]) + "_without_bom",)


LEGACY = {  # a sentence of ours in a script whose files were long written in that code page
    "cp1256": "نقترح طريقة جديدة لتصنيف النصوص العلمية ونقيس دقتها على ثلاث مجموعات من البيانات.",
    "cp1255": "אנו מציעים שיטה חדשה לסיווג תקצירים מדעיים ובודקים אותה על שלושה מאגרי נתונים.",
    "cp874": "เราเสนอวิธีใหม่สำหรับการจัดหมวดหมู่บทคัดย่อทางวิทยาศาสตร์และทดสอบกับข้อมูลสามชุด",
    "koi8_u": "Ми пропонуємо новий метод класифікації наукових анотацій і перевіряємо його на трьох наборах.",
}


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("Siūlome naują būdą mokslinių santraukų kalbai nustatyti ir išbandome jį su žmonių anotacijomis.",
         "cp1257"),
        ("Új módszert javasolunk, amely az első lépésben több nyelvű gyűjteményt használ, és a kérdőívek "
         "adatain mérjük.", "iso8859_2"),
    ],
)  # fmt: skip
def test_latin_code_pages_are_told_apart_by_the_words_they_spell(text, codec):
    """cp1252 readings of these bytes are as plausible to charset detection ("þmoniø", "elsõ"); the
    reading whose accented words the language knows is the one taken."""
    text = "ICLR 2026 Papers\n\n" + "\n\n".join([text] * 3) + "\n"
    assert decode_bytes(text.encode(codec)).text == text


@pytest.mark.parametrize("codec", sorted(LEGACY))
def test_legacy_code_pages_of_arabic_hebrew_thai_and_ukrainian_are_read(codec):
    text = "ICLR 2026 Papers\n\n" + "\n\n".join([LEGACY[codec]] * 3) + "\n"
    decoded = decode_bytes(text.encode(codec))
    assert decoded.text == text and decoded.encoding == codec


# The UDHR in each language's legacy code page. Not told apart: Estonian in cp1257 (read as cp1250:
# wordfreq has no Estonian list to check its words against) and Romanian in Latin-10 (read as cp1250,
# "ş" for "ș").
UDHR_CODE_PAGES = {
    **dict.fromkeys("fr de es pt it nl da sv no fi ca en".split(), "cp1252"),
    **dict.fromkeys("cs pl hr sl".split(), "cp1250"),
    **dict.fromkeys("lt lv".split(), "cp1257"),
    **dict.fromkeys("hu sk".split(), "iso8859_2"),
    **dict.fromkeys("ru bg mk".split(), "cp1251"),
    "uk": "koi8_u", "el": "cp1253", "tr": "cp1254", "he": "cp1255", "ar": "cp1256", "th": "cp874",
    "vi": "cp1258", "ja": "shift_jis", "zh-cn": "gb18030", "zh-tw": "big5", "ko": "cp949",
}  # fmt: skip


@needs_udhr
@pytest.mark.parametrize("lang", sorted(UDHR_CODE_PAGES))
def test_the_udhr_in_its_legacy_code_page_reads_as_written(lang):
    codec = UDHR_CODE_PAGES[lang]
    lines = [line.strip() for line in (UDHR / f"{lang}.txt").read_text("utf-8").splitlines()]
    written = []
    for line in lines:
        try:
            line.encode(codec)
        except UnicodeEncodeError:
            continue  # a character the code page lacks
        if len(line) > 80:
            written.append(line)
    text = "ICLR 2026 Papers\n\n" + "\n\n".join(written[:8]) + "\n"
    assert decode_bytes(text.encode(codec)).text == text
