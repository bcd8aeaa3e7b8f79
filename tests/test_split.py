from hypothesis import assume, given
from hypothesis import strategies as st

from corpus_hygiene.ingest.split import first_nonblank, is_blank, iter_paragraphs, split_lines


def test_splits_on_lf_crlf_and_cr_only():
    assert split_lines("a\r\nb\rc\nd\u2028e\x0cf\x85g\u2029h") == ["a", "b", "c", "d\u2028e\x0cf\x85g\u2029h"]


def test_paragraph_line_numbers_with_mixed_endings():
    text = "Header 2024\r\n\r\nfirst para\rcontinues\n \t \nsecond\u2028same line\r\n\n\nthird"
    lines = split_lines(text)
    paras = list(iter_paragraphs(lines, 1))
    assert [(p.line, p.text) for p in paras] == [
        (3, "first para\ncontinues"),
        (6, "second\u2028same line"),
        (9, "third"),
    ]


def test_blank_lines_include_whitespace_and_invisible_characters():
    assert is_blank("   \t\u00a0\u3000")
    assert is_blank("\u200b\ufeff")
    assert not is_blank(" x ")


def test_first_nonblank_skips_leading_blank_lines():
    assert first_nonblank(["", "  ", "Header"]) == 2
    assert first_nonblank(["", " "]) is None


line_text = st.text(alphabet=st.characters(blacklist_characters="\r\n"), max_size=20)
ending = st.sampled_from(["\n", "\r\n", "\r"])


@given(st.lists(st.tuples(line_text, ending), min_size=1, max_size=40))
def test_source_line_points_at_the_first_line_of_each_paragraph(pairs):
    # "\r" then an empty line ended by "\n" would be one "\r\n" break: not a mix this test means.
    assume(
        all(
            not (e == "\r" and nxt == "" and ne.startswith("\n"))
            for (_, e), (nxt, ne) in zip(pairs, pairs[1:], strict=False)
        )
    )
    text = "".join(line + end for line, end in pairs)
    lines = [line for line, _ in pairs] + [""]
    assert split_lines(text) == lines
    for para in iter_paragraphs(split_lines(text)):
        first = lines[para.line - 1]
        assert not is_blank(first)
        assert para.text.split("\n")[0] == first
        assert para.line == 1 or is_blank(lines[para.line - 2])


@given(st.text(max_size=500))
def test_paragraphs_cover_every_nonblank_line_exactly_once(text):
    lines = split_lines(text)
    covered = []
    for para in iter_paragraphs(lines):
        n = para.text.count("\n") + 1
        covered.extend(range(para.line, para.line + n))
    assert covered == [i + 1 for i, line in enumerate(lines) if not is_blank(line)]


@given(st.text(alphabet="ab \n", max_size=300), st.integers(1, 40))
def test_paragraphs_over_the_limit_keep_their_start_and_their_length(text, limit):
    from corpus_hygiene.ingest.split import OVERSIZED_KEPT, paragraphs_from

    lines = split_lines(text)
    for bounded, full in zip(paragraphs_from(lines, 0, limit), paragraphs_from(lines, 0), strict=True):
        assert bounded.line == full.line
        if len(full.text) <= limit:
            assert bounded == full
        else:
            assert bounded.n_chars == len(full.text) and bounded.text == full.text[:OVERSIZED_KEPT]
