"""Per-file cache: an unchanged file is served from the cache; anything that shapes it is in the key."""

import hashlib
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checks import load_policy
from corpus_hygiene.incremental.file_cache import FileCache, decode, encode
from corpus_hygiene.ingest import discover
from corpus_hygiene.models import FileResult, Header, Record, Rejected, SourceReport
from corpus_hygiene.pipeline.process import process_file
from corpus_hygiene.store.records import records_of

from .conftest import EXAMPLES


def test_second_run_is_served_from_the_cache_with_equal_results(tmp_path, policy):
    cache = FileCache(tmp_path / "cache")
    files = discover(EXAMPLES, policy.max_file_bytes).files
    first = [process_file(f, policy, cache) for f in files]
    second = [process_file(f, policy, cache) for f in files]
    assert not any(r.source.cached for r in first) and all(r.source.cached for r in second)
    for a, b in zip(first, second, strict=True):
        assert a.records == b.records and a.rejected == b.rejected
        assert replace(a.source, cached=True) == b.source


def test_a_changed_file_or_policy_is_a_miss_and_prune_drops_the_rest(tmp_path, policy):
    (tmp_path / "in").mkdir()
    src_path = tmp_path / "in" / "a.txt"
    src_path.write_text(
        "ICLR 2026 Papers\n\nAn abstract about caching the results of unchanged files for a re-run."
    )
    cache = FileCache(tmp_path / "cache")
    (src,) = discover(tmp_path / "in", policy.max_file_bytes).files
    process_file(src, policy, cache)
    assert process_file(src, policy, cache).source.cached
    assert not process_file(src, replace(policy, sha256="0" * 64), cache).source.cached
    src_path.write_text(
        "ICLR 2026 Papers\n\nA changed abstract about caching the results of files nobody touched since."
    )
    (src,) = discover(tmp_path / "in", policy.max_file_bytes).files
    result = process_file(src, policy, cache)
    assert not result.source.cached and "changed" in result.records[0].text
    assert len(cache.entries()) == 3
    assert cache.prune(cache.keys_of([result.source], policy.sha256)) == 2
    assert len(cache.entries()) == 1


def test_a_damaged_entry_is_recomputed(tmp_path, policy):
    cache = FileCache(tmp_path / "cache")
    (src,) = [f for f in discover(EXAMPLES, policy.max_file_bytes).files if f.rel_path == "fr/taln_2025.txt"]
    process_file(src, policy, cache)
    for entry in cache.entries():
        entry.write_bytes(b"not an entry")
    result = process_file(src, policy, cache)
    assert not result.source.cached and len(result.records) == 2


def test_hits_are_the_entries_of_unchanged_files_marked_as_cached(tmp_path, policy):
    from corpus_hygiene.incremental.run_key import hash_inputs

    found = discover(EXAMPLES, policy.max_file_bytes)
    hashes = hash_inputs(found)
    cache = FileCache(tmp_path / "cache")
    written = {f.rel_path: process_file(f, policy, cache) for f in found.files[:3]}
    hits = {r.source.source_file: (r, t) for r, t in cache.hits(found.files, hashes, policy.sha256)}
    assert sorted(hits) == sorted(written)
    for path, (result, table) in hits.items():
        assert result.source.cached and not result.records and records_of(table) == written[path].records
    changed = dict(hashes, **{found.files[0].rel_path: "0" * 64})
    hits = [r.source.source_file for r, _ in cache.hits(found.files, changed, policy.sha256)]
    assert hits == [f.rel_path for f in found.files[1:3]]


_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=40)


@st.composite
def file_results(draw):
    """A file's result with records whose per-file values may all agree or not (the two column forms)."""
    n = draw(st.integers(0, 6))
    one_file = draw(st.booleans())
    records = []
    for i in range(n):
        text = draw(_text)
        records.append(
            Record(
                source_file="a/b.txt" if one_file else draw(_text),
                source_line=i + 3,
                venue=draw(st.one_of(st.none(), st.sampled_from(["ICLR", "TALN"]))),
                year=draw(st.one_of(st.none(), st.integers(1900, 2100))),
                header_label=draw(st.sampled_from(["Papers", "论文列表"])),
                header_lang=draw(st.sampled_from(["en", "zh"])),
                text=text,
                text_raw=draw(st.one_of(st.just(text), _text)),
                lang=draw(st.sampled_from(["en", "zh", "und"])),
                lang_confidence=draw(st.floats(0, 1)),
                fixes=tuple(draw(st.lists(st.sampled_from(["mojibake", "latex", "markdown"]), max_size=3))),
                record_id=draw(st.text("0123456789abcdef", min_size=32, max_size=32)),
                n_words=draw(st.integers(0, 500)),
                mean_word_length=draw(st.floats(0, 20)),
                alpha_share=draw(st.floats(0, 1)),
                stopword_share=draw(st.one_of(st.none(), st.floats(0, 1))),
                repeated_ngram_share=draw(st.floats(0, 1)),
                n_urls=draw(st.integers(0, 9)),
                n_emails=draw(st.integers(0, 9)),
                n_phones=draw(st.integers(0, 9)),
                lost_words=tuple(draw(st.lists(_text, max_size=2))),
                signature=draw(st.binary(min_size=8, max_size=8)),
                text_key=draw(st.binary(min_size=16, max_size=16)),
            )
        )
    header = Header(1, "ICLR 2026 Papers", "ICLR", 2026, "Papers", "en") if draw(st.booleans()) else None
    source = SourceReport("a/b.txt", 123, "0" * 64, "utf_8", 1.0, ("bom",), header, 9, n)
    rejected = [Rejected("a/b.txt", 2, "too_short", "3 characters", draw(st.one_of(st.none(), _text)))]
    return FileResult(source, records, rejected, checked=draw(st.booleans()))


@given(file_results())
def test_an_entry_reads_back_equal_to_what_was_written(result):
    back = decode(encode(result))
    assert back == result
    for a, b in zip(back.records, result.records, strict=True):  # equal and of the same types
        assert type(a.fixes) is tuple and type(a.lang_confidence) is type(b.lang_confidence)


def test_damaged_entries_are_errors_not_crashes_or_huge_allocations():
    result = process_file(
        next(f for f in discover(EXAMPLES, 1 << 20).files if f.rel_path == "fr/taln_2025.txt"), load_policy()
    )
    blob = encode(result)
    assert decode(blob) == result
    for damaged in (
        blob[:-5],
        blob + b"x",
        b"chz3" + blob[4:],
        blob[:40] + bytes([blob[40] ^ 1]) + blob[41:],
        b"not an entry",
    ):
        with pytest.raises((ValueError, OSError)):
            decode(damaged)


@given(file_results())
def test_lengths_no_entry_can_have_are_errors_even_under_a_matching_digest(result):
    blob = encode(result)
    body, huge = blob[20:], (1 << 60).to_bytes(8, "little")
    head = int.from_bytes(body[:8], "little") + 8
    for damaged in (huge + body[8:], body[:8] + huge + body[16:], body[:head] + huge + body[head + 8 :]):
        with pytest.raises((ValueError, OSError)):
            decode(b"chz4" + hashlib.blake2b(damaged, digest_size=16).digest() + damaged)


def test_prune_removes_entries_of_the_earlier_format_and_leaves_other_files(tmp_path, policy):
    cache = FileCache(tmp_path / "cache")
    (src,) = [f for f in discover(EXAMPLES, policy.max_file_bytes).files if f.rel_path == "fr/taln_2025.txt"]
    result = process_file(src, policy, cache)
    (cache.folder / f"{'1' * 64}.json.zst").write_bytes(b"an entry of the format before")
    (cache.folder / "verified-abc.npz").write_bytes(b"the near-duplicate memo")
    assert cache.prune(cache.keys_of([result.source], policy.sha256)) == 1
    assert sorted(p.name for p in cache.folder.iterdir()) == sorted(
        [cache.entries()[0].name, "verified-abc.npz"]
    )


def test_the_list_of_contract_checked_entries_reads_back_and_a_damaged_one_is_empty(tmp_path):
    cache = FileCache(tmp_path / "cache")
    assert cache.contract_checked() == set()
    cache.set_contract_checked({"b" * 64, "a" * 64})
    assert cache.contract_checked() == {"a" * 64, "b" * 64}
    assert cache.prune(set()) == 0 and cache.contract_checked()  # not an entry: prune leaves it
    for damaged in ("{not json", '{"a": 1}', "[1, 2]"):
        (tmp_path / "cache" / FileCache.CHECKED).write_text(damaged)
        assert cache.contract_checked() == set()
