"""Dedup: keys, script-aware shingles, verification, the no-chaining rule, the canonical choice."""

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.deduplicate import deduplicate
from corpus_hygiene.dedup.keys import dedup_key, record_id
from corpus_hygiene.dedup.lsh import candidate_pairs
from corpus_hygiene.dedup.near import find_near_duplicates
from corpus_hygiene.dedup.shingles import jaccard, shingles
from corpus_hygiene.dedup.similarity import verified_similarity
from corpus_hygiene.models import Record

from .conftest import ROOT

BASE = (
    "We study how annotation noise propagates through a pipeline of detectors and taggers and show that a "
    "small audit set of two hundred examples removes most of the damage at a fraction of the usual cost"
)


def rec(text, file="a.txt", line=3, fixes=()):
    return Record(
        file,
        line,
        "ICLR",
        2026,
        "Papers",
        "en",
        text,
        text,
        "en",
        1.0,
        tuple(fixes),
        record_id(dedup_key(text)),
    )


@pytest.mark.parametrize(
    "variant",
    [
        BASE.upper(),
        "  " + BASE.replace(" ", "  \n") + " ",
        BASE.replace("fi", "ﬁ"),  # ligature
        BASE.replace("a ", "ａ "),  # full-width
        BASE.replace(" ", "\u00a0"),  # NBSP
        BASE.replace("e", "e\u200b"),  # zero-width spaces
        BASE + ".",
        BASE.replace(",", "，"),
    ],
)
def test_exact_variants_share_the_key(variant):
    from corpus_hygiene.clean import clean_text

    assert dedup_key(clean_text(variant).text) == dedup_key(BASE)


def test_accents_in_nfd_and_nfc_share_the_key():
    assert dedup_key("re\u0301sume\u0301 cafe\u0301") == dedup_key("résumé café")


def test_record_id_is_a_stable_hash():
    assert record_id(dedup_key(BASE)) == record_id(dedup_key(BASE.upper()))
    assert len(record_id("x")) == 32 and record_id("x") != record_id("y")


@given(st.lists(st.binary(min_size=16, max_size=16)), st.integers(0, 3))
def test_ids_as_bytes_and_back(raw, cut):
    import pyarrow as pa

    from corpus_hygiene.dedup.keys import id_bytes

    ids = [r.hex() for r in raw]
    array = pa.array(["0" * 32] * cut + ids, pa.string()).slice(cut)  # an offset, as a slice of a column
    got = id_bytes(pa.chunked_array([array[:1], array[1:]]) if ids else array)
    assert got.shape == (len(ids), 16) and [bytes(row) for row in got] == raw  # trailing zero bytes kept


@pytest.mark.parametrize(
    ("ids", "message"),
    [(["A" * 32], "hex"), (["g" * 32], "hex"), (["ab"], "32 characters"), ([None], "null")],
)
def test_an_id_that_is_not_32_hex_digits_is_refused(ids, message):
    import pyarrow as pa

    from corpus_hygiene.dedup.keys import id_bytes

    with pytest.raises(ValueError, match=message):
        id_bytes(pa.array(ids, pa.string()))


@given(st.sets(st.integers(0, 40)), st.lists(st.integers(0, 40)), st.integers(1, 4))
def test_lookup_finds_each_value_and_its_column_in_any_slice_size(keys, values, rows):
    from corpus_hygiene.dedup.exact import lookup

    ordered = np.array(sorted(keys), np.int64)
    found, doubled = lookup(ordered, np.array(values, np.int64), 2 * ordered, rows=rows)
    assert found.tolist() == [v in keys for v in values]
    assert doubled.tolist() == [2 * v if v in keys else 0 for v in values]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2), st.integers(1, 3)), max_size=30))
def test_exact_groups_keep_the_best_ranked_record_of_each_id(rows):
    """Against the definition: of the records sharing an id, all but the best-ranked (fewest repairs,
    then longest by a 2% step, then earliest file and line) are exact duplicates of it."""
    from corpus_hygiene.dedup.exact import exact_groups, length_step
    from corpus_hygiene.store.records import keys_of

    def canonical_rank(k):
        return (k.n_fixes, -length_step(k.n_chars), k.source_file, k.source_line)

    records = [
        replace(rec("x" * 40 * size, f"{line % 3}.txt", line, ["fix"] * fixes), record_id=record_id(str(i)))
        for line, (i, fixes, size) in enumerate(rows)
    ]
    keys = keys_of(records)
    expected = {}
    for i, r in enumerate(records):
        expected.setdefault(r.record_id, []).append(i)
    best = {rid: min(group, key=lambda i: canonical_rank(keys[i])) for rid, group in expected.items()}
    want = sorted((i, best[r.record_id]) for i, r in enumerate(records) if i != best[r.record_id])
    dups, canonical = exact_groups(keys)
    assert sorted(zip(dups.tolist(), canonical.tolist(), strict=True)) == want


def test_shingles_are_words_for_latin_and_characters_for_cjk():
    assert shingles("Graph nets work") == {"graph nets", "nets work"}
    assert shingles("图神经网络") == {"图神", "神经", "经网", "网络"}
    assert shingles("日本語の論文") == {"日本", "本語", "語の", "の論", "論文"}
    mixed = shingles("我们使用 BERT base 模型")
    assert {"我们", "们使", "使用", "bert base", "模型"} <= mixed


texts_of_every_script = st.one_of(
    st.text(max_size=60),
    st.text(alphabet=st.characters(max_codepoint=127), max_size=60),  # the ASCII path (tokens.py)
    st.lists(
        st.sampled_from([*"aZ9_ -.", "हिन्दी", "模型", "の", "한국", "\u0301", "ﬁ", "İ", "𝔘"]), max_size=16
    ).map("".join),
)


@given(texts_of_every_script, st.integers(1, 4), st.integers(1, 4))
def test_shingles_are_every_n_gram_of_the_words_and_of_each_cjk_run(text, word_n, char_n):
    """Against the definition, written plainly: a run shorter than n is one shingle."""
    import unicodedata

    from corpus_hygiene.dedup.shingles import _CJK_RUN, _WORD

    def grams(items, n, sep):
        return {sep.join(items[i : i + n]) for i in range(max(1, len(items) - n + 1))} if items else set()

    norm = unicodedata.normalize("NFKC", text).casefold()
    words = _WORD(norm).findall(_CJK_RUN.sub(" ", norm).replace("_", " "))
    runs = [grams(run, char_n, "") for run in _CJK_RUN.findall(norm)]
    assert shingles(text, word_n, char_n) == grams(words, word_n, " ").union(*runs)


@given(texts_of_every_script)
def test_the_one_class_key_pattern_gives_the_general_patterns_key(text):
    import unicodedata

    from corpus_hygiene.dedup.keys import _NOT_ALNUM

    norm = unicodedata.normalize("NFKC", text).casefold()
    assert dedup_key(text) == _NOT_ALNUM(norm).sub("", norm)


def test_candidates_are_verified_not_taken_from_lsh_on_trust():
    a = BASE
    b = BASE.replace("annotation noise", "label noise")
    far = (
        "Completely different text about protein folding with large language models and many other words here"
    )
    matches = find_near_duplicates([a, b, far], DedupConfig())
    assert [(m.index, m.canonical) for m in matches] == [(1, 0)]
    assert matches[0].similarity == round(verified_similarity(a, b, DedupConfig()), 6)


def test_verified_similarity_forgives_edits_and_reordering_but_not_a_shared_opening():
    cfg = DedupConfig()
    edited = (
        BASE.replace("detectors", "parsers")
        .replace("most of", "much of")
        .replace("usual", "normal")
        .replace("small", "tiny")
        .replace("two hundred", "three hundred")
    )
    assert jaccard(shingles(BASE), shingles(edited)) < cfg.threshold  # scattered edits break bigrams…
    assert verified_similarity(BASE, edited, cfg) > 0.8  # …and the alignment credits them
    first, second = BASE.split(" and show ")
    assert verified_similarity(BASE, f"and show {second} {first}", cfg) > 0.8  # Jaccard credits reordering
    other = (
        "and then we measured the energy use of forty data centres across three continents over a year, "
        "finding that cooling dominates everything else by a wide margin"
    )
    assert verified_similarity(BASE, first + " " + other, cfg) < 0.6


def test_no_transitive_chain():
    words = BASE.split()
    a = " ".join(words)
    b = " ".join(words[:-7] + [f"x{i}" for i in range(7)])  # A ~ B: B rewrote A's ending
    c = " ".join([f"y{i}" for i in range(7)] + b.split()[7:])  # B ~ C: C rewrote B's opening too
    cfg = DedupConfig(threshold=0.7, min_candidate_jaccard=0.0, bands=64, rows=2)
    sim = lambda x, y: verified_similarity(x, y, cfg)  # noqa: E731
    assert sim(a, b) >= 0.7 and sim(b, c) >= 0.7 and sim(a, c) < 0.7
    got = [(m.index, m.canonical) for m in find_near_duplicates([a, b, c], cfg)]
    assert (1, 0) in got
    assert all(not (i == 2 and j == 0) for i, j in got)  # C is never merged into A
    assert 2 not in {i for i, _ in got if _ == 1}  # and not into B, which is no canonical


CANONICAL_CASES = json.loads((ROOT / "tests" / "cases" / "canonical.json").read_text())


@pytest.mark.parametrize("case", CANONICAL_CASES, ids=[c["label"] for c in CANONICAL_CASES])
def test_canonical_choice(case):
    records = [rec(r["text"], r["file"], r["line"], r["fixes"]) for r in case["records"]]
    kept, dups, _ = deduplicate(records, DedupConfig())
    assert [r.ref for r in kept] == case["expected_kept"]
    assert sorted((d.record.ref, d.reason) for d in dups) == sorted(map(tuple, case["expected_reasons"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2), min_size=8, max_size=8), max_size=40))
def test_candidate_pairs_are_exactly_the_pairs_sharing_a_band(rows):
    """The sort-and-group banded LSH against the definition: i < j share all values of some band."""
    cfg = DedupConfig(num_perm=8, bands=4, rows=2, min_candidate_jaccard=0.0)
    sig = np.array(rows, dtype=np.uint32).reshape(len(rows), 8)
    n = len(sig)
    expected = sorted(
        j * n + i
        for j in range(n)
        for i in range(j)
        if any((sig[i, b * 2 : b * 2 + 2] == sig[j, b * 2 : b * 2 + 2]).all() for b in range(4))
    )
    assert candidate_pairs(sig, cfg).tolist() == expected


def _fresh_search(sig, fresh, cfg, step, cjk=None):
    """``fresh_candidate_pairs`` on ``sig`` read ``step`` rows at a time."""
    from corpus_hygiene.dedup.lsh import fresh_candidate_pairs

    cjk = np.zeros(len(sig), bool) if cjk is None else cjk
    slices = ((lo, sig[lo : lo + step]) for lo in range(0, len(sig), step))
    return fresh_candidate_pairs(slices, fresh, sig[fresh], cfg, cjk).tolist()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.lists(st.integers(0, 2), min_size=8, max_size=8), st.booleans()), max_size=40),
    st.integers(1, 16),
    st.sampled_from([(4, 2), (2, 4), (2, 3)]),  # bands of one 64-bit word, two, and two with padding
    st.floats(0.0, 0.8),
)
def test_candidate_pairs_of_fresh_records_are_the_pairs_with_a_fresh_member(rows, step, shape, floor):
    """The re-run's search (``fresh_candidate_pairs``) finds exactly the full search's pairs that have a
    fresh record, whatever the slices its signatures are read in."""
    bands, per_band = shape
    cfg = DedupConfig(num_perm=bands * per_band, bands=bands, rows=per_band, min_candidate_jaccard=floor)
    sig = np.array([r for r, _ in rows], dtype=np.uint32).reshape(len(rows), 8)[:, : bands * per_band]
    fresh = np.array([f for _, f in rows], dtype=bool)
    n = len(sig)
    full = candidate_pairs(sig, cfg)
    assert _fresh_search(sig, fresh, cfg, step) == [c for c in full.tolist() if fresh[c // n] or fresh[c % n]]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["signed", "short", "none"]), max_size=12), st.integers(0, 6))
def test_a_signature_block_uses_each_known_signature_and_signs_only_the_other_texts(kinds, offset):
    import pyarrow as pa

    from corpus_hygiene.dedup.signatures import signature_block, signature_of

    config = DedupConfig(num_perm=16, bands=4)
    texts = [f"text number {i} about graphs and models" for i in range(len(kinds))]
    made = {
        "signed": lambda t: signature_of(t[::-1], config),
        "short": lambda t: b"\x01\x02",
        "none": lambda t: None,
    }
    blobs = [b"padding"] * offset + [made[k](t) for k, t in zip(kinds, texts, strict=True)]
    asked = []

    def texts_at(rows):
        asked.extend(rows.tolist())
        return [texts[r] for r in rows]

    rows = signature_block(pa.array(blobs, pa.binary()).slice(offset), texts_at, config)
    # a known signature is taken as it is (here: another text's), the others are signed from their text
    expected = [
        signature_of(t[::-1] if k == "signed" else t, config) for k, t in zip(kinds, texts, strict=True)
    ]
    assert rows.dtype == np.uint32 and rows.shape == (len(kinds), 16)
    assert [r.astype("<u4").tobytes() for r in rows] == expected
    assert asked == [i for i, k in enumerate(kinds) if k != "signed"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=30), st.integers(1, 40))
def test_bucket_runs_are_every_pair_once_in_chunks(counts, chunk):
    """``_runs`` yields (x, first[x] + k) for every k < count[x], each once, in chunks of about ``chunk``."""
    from corpus_hygiene.dedup import lsh

    count = np.array(counts, dtype=np.int64)
    first = np.arange(len(count), dtype=np.int64) * 10
    pieces = list(lsh._runs(first, count, chunk))
    got = [(int(x), int(y)) for xs, ys in pieces for x, y in zip(xs, ys, strict=True)]
    assert got == [(x, first[x] + k) for x in range(len(count)) for k in range(count[x])]
    assert all(len(xs) <= max(chunk, int(count.max(initial=0))) for xs, _ in pieces)


def test_a_band_hash_that_only_collides_makes_no_pair():
    """The re-run's search looks bands up by a 64-bit hash; a record that shares the hash but not the
    band makes no pair."""
    m = 0x9E3779B97F4A7C15
    fresh_band, twin = (5, 7), (6, (7 - m) % 2**64)  # h = w0 * m + w1 (mod 2**64): equal for both
    keys = np.array([fresh_band, twin, fresh_band, (1, 1)], dtype=np.uint64)
    from corpus_hygiene.dedup.lsh import band_hash

    assert band_hash(keys)[0] == band_hash(keys)[1]
    fresh = np.array([True, False, False, False])
    sig = keys.view(np.uint32)  # one band of 4 uint32 values a record
    cfg = DedupConfig(num_perm=4, bands=1, rows=4, min_candidate_jaccard=0.0)
    assert _fresh_search(sig, fresh, cfg, 2) == [2 * 4 + 0]  # records 0 and 2 only


def test_the_band_search_finds_the_same_pairs_in_one_thread_or_several(monkeypatch):
    """Bands are searched in threads (``band_threads``): the pairs do not depend on how many; the count
    A re-run's search of the fresh records finds the same pairs with one."""
    from corpus_hygiene.dedup import lsh

    rng = np.random.default_rng(7)
    sig = rng.integers(0, 3, size=(400, 16), dtype=np.uint32)  # small values: many bands collide
    cfg = DedupConfig(num_perm=16, bands=8, rows=2, min_candidate_jaccard=0.3)
    fresh = rng.random(400) < 0.05
    found = {}
    for threads in (1, 3):
        monkeypatch.setattr(lsh, "band_threads", lambda t=threads: t)
        found[threads] = candidate_pairs(sig, cfg).tolist()
    assert found[1] == found[3] and len(found[1]) > 1000
    with_fresh = [c for c in found[1] if fresh[c // 400] or fresh[c % 400]]
    assert 0 < len(with_fresh) < len(found[1]) and _fresh_search(sig, fresh, cfg, 64) == with_fresh


def test_candidate_pairs_odd_rows_and_empty_input():
    cfg = DedupConfig(num_perm=9, bands=3, rows=3, min_candidate_jaccard=0.0)
    sig = np.array([[1] * 9, [1, 1, 1, 2, 2, 2, 3, 3, 3], [5] * 9], dtype=np.uint32)
    assert candidate_pairs(sig, cfg).tolist() == [1 * 3 + 0]
    assert candidate_pairs(np.empty((0, 9), dtype=np.uint32), cfg).tolist() == []
    assert find_near_duplicates([], DedupConfig()) == []


def test_candidate_pairs_keep_only_pairs_whose_estimate_reaches_the_floor():
    cfg = DedupConfig(num_perm=8, bands=4, rows=2, min_candidate_jaccard=0.5)
    sig = np.array(
        [[1, 1, 2, 2, 3, 3, 4, 4], [1, 1, 9, 9, 3, 3, 9, 9], [1, 1, 8, 8, 8, 8, 8, 8]], dtype=np.uint32
    )
    # rows 0 and 1 agree on 4 of 8 values (estimate 0.5), rows 0/2 and 1/2 on 2 of 8 (0.25)
    assert candidate_pairs(sig, cfg).tolist() == [1 * 3 + 0]


def _corpus_with_near_copies():
    words = BASE.split()
    texts = [BASE]
    for i in range(1, 6):  # a few words changed each: near copies of BASE (and of each other)
        texts.append(" ".join(w if k % 7 != i else f"w{i}{k}" for k, w in enumerate(words)))
    texts.append(" ".join(words[:-7] + [f"x{i}" for i in range(7)]))
    texts.append(" ".join([f"y{i}" for i in range(7)] + texts[-1].split()[7:]))
    texts.append(
        "and then we measured the energy use of forty data centres across three continents over a year"
    )
    return [rec(t, f"f{i % 3}.txt", 3 + 2 * i) for i, t in enumerate(texts)]


def _outcome(kept, dups, _pairs=None):
    return [r.ref for r in kept], sorted((d.record.ref, d.canonical.ref, d.similarity) for d in dups)


def test_memo_from_an_earlier_run_gives_the_same_result_without_verifying_again(tmp_path, monkeypatch):
    from corpus_hygiene.dedup import near
    from corpus_hygiene.incremental.pair_memo import PairMemo, load_memo, memo_path, save_memo, text_key

    cfg = DedupConfig(min_candidate_jaccard=0.0, bands=64, rows=2)
    records = _corpus_with_near_copies()
    plain = _outcome(*deduplicate(records, cfg))
    assert len(plain[1]) >= 3  # the corpus does have near duplicates to find

    first = PairMemo()
    assert _outcome(*deduplicate(records, cfg, first)) == plain
    assert first.hits == 0 and len(first.used) >= 3
    path = memo_path(tmp_path, cfg)
    save_memo(path, first)

    calls = []
    real = near.verified_similarity
    monkeypatch.setattr(near, "verified_similarity", lambda a, b, c: calls.append(1) or real(a, b, c))
    again = load_memo(path)
    assert again.known == first.used
    assert _outcome(*deduplicate(records, cfg, again)) == plain
    assert calls == [] and again.hits == len(first.used)

    # one new record: only its own pairs are verified, and the result is that of a run without memo
    grown = records + [rec(BASE.replace("audit", "review"), "g.txt", 3)]
    memo = load_memo(path)
    with_memo = _outcome(*deduplicate(grown, cfg, memo))
    new_pairs = {k for k in memo.used if k not in memo.known}
    assert len(calls) == len(new_pairs) > 0  # verified: the new record's pairs, nothing else
    assert all(text_key(grown[-1].text) in pair for pair in new_pairs)
    assert with_memo == _outcome(*deduplicate(grown, cfg))


def test_memo_candidates_from_an_earlier_run_are_reused_and_only_new_texts_are_searched(
    tmp_path, monkeypatch
):
    from corpus_hygiene.dedup import near
    from corpus_hygiene.incremental.pair_memo import (
        PairMemo,
        load_memo,
        memo_path,
        save_memo,
        text_key,
    )

    cfg = DedupConfig(min_candidate_jaccard=0.0, bands=64, rows=2)
    records = _corpus_with_near_copies()
    first = PairMemo()
    deduplicate(records, cfg, first)
    assert len(first.next_candidates) >= 5 and len(first.next_indexed) == len(records)
    path = memo_path(tmp_path, cfg)
    save_memo(path, first)
    again = load_memo(path)
    assert sorted(again.indexed.tolist()) == sorted(first.next_indexed.tolist())
    assert sorted(map(tuple, again.candidates.tolist())) == sorted(map(tuple, first.next_candidates.tolist()))

    searched = []
    real, full = near.fresh_candidate_pairs, near.candidate_pairs
    monkeypatch.setattr(near, "fresh_candidate_pairs", lambda *a: searched.append(a[1]) or real(*a))
    monkeypatch.setattr(near, "candidate_pairs", lambda *a: searched.append(None) or full(*a))
    # one record gone, one new: the LSH search looks at the new text only; the result is a fresh run's
    grown = records[1:] + [rec(records[2].text.replace("audit", "review"), "g.txt", 3)]
    memo = load_memo(path)
    assert _outcome(*deduplicate(grown, cfg, memo)) == _outcome(*deduplicate(grown, cfg))
    fresh = searched[0]
    assert fresh is not None and fresh.sum() == 1
    assert text_key(grown[-1].text) + b"\x00" in memo.next_candidates.ravel().tolist()
    assert text_key(records[0].text) + b"\x00" not in memo.next_indexed.tolist()  # removed: forgotten
    # a memo without candidates (older file, or first run) searches everything
    deduplicate(grown, cfg, PairMemo())
    assert searched[-1] is None


class _TextsRead(list):
    """Texts that note which ones are read at once (``take``, as a staged column is read)."""

    def take(self, indices):
        self.read = getattr(self, "read", set()) | set(indices.tolist())
        return [self[i] for i in indices.tolist()]


def test_a_rerun_reads_only_the_texts_of_pairs_without_a_memo_similarity():
    """The star pass reads the texts of its candidate pairs before it starts; a re-run reads those of
    the pairs the memo has no similarity for, not every pair's (signatures made per file: none signed)."""
    from corpus_hygiene.dedup.signatures import signature_of
    from corpus_hygiene.incremental.pair_memo import PairMemo, text_key

    cfg = DedupConfig()
    texts = [r.text for r in _corpus_with_near_copies()]
    first = PairMemo()
    find_near_duplicates(texts, cfg, memo=first)
    grown = _TextsRead([*texts, texts[-1].replace("forty", "fifty")])  # a near copy of the last
    again = PairMemo(dict(first.used), first.next_indexed, first.next_candidates)
    full = _TextsRead(grown)
    signed = [signature_of(t, cfg) for t in grown]
    assert find_near_duplicates(grown, cfg, signed, memo=again) == find_near_duplicates(full, cfg, signed)
    keys = [text_key(t) for t in grown]
    n = len(grown)
    lacking = {
        x
        for a, b in map(tuple, again.next_candidates.tolist())
        if tuple(sorted((a[:16], b[:16]))) not in first.used
        for x in (keys.index(a[:16]), keys.index(b[:16]))
    }
    assert grown.read == lacking and n - 1 in lacking and len(lacking) < len(full.read)


def test_memo_candidates_follow_a_text_whose_cjk_flag_changed():
    """The same clean text can come with another language (detected on the raw text), so another
    estimate floor: it is searched again, and the candidates are those of a run without memo."""
    from corpus_hygiene.incremental.pair_memo import PairMemo

    cfg = DedupConfig(num_perm=8, bands=4, rows=2, min_candidate_jaccard=0.5, min_candidate_jaccard_cjk=0.9)
    sig = np.array([[1, 1, 2, 2, 3, 3, 4, 4], [1, 1, 9, 9, 3, 3, 9, 9]], dtype="<u4")
    texts, keys = ["text a", "text b"], [b"a" * 16, b"b" * 16]

    def candidates(memo, cjk):
        find_near_duplicates(texts, cfg, [r.tobytes() for r in sig], cjk, memo, keys)
        return [(a.tobytes()[:1], b.tobytes()[:1]) for a, b in memo.next_candidates]

    memo = PairMemo()
    assert candidates(memo, [False, False]) == [(b"b", b"a")]
    # 4 of 8 values agree: 0.5 reaches the floor of latin text, not the CJK floor
    again = PairMemo(indexed=memo.next_indexed, candidates=memo.next_candidates)
    assert candidate_pairs(sig, cfg, np.array([True, True])).tolist() == []
    assert candidates(again, [True, True]) == []


def test_memo_file_absent_or_damaged_is_an_empty_memo_and_a_config_change_a_new_file(tmp_path):
    from corpus_hygiene.incremental.pair_memo import load_memo, memo_path

    cfg = DedupConfig()
    path = memo_path(tmp_path, cfg)
    assert load_memo(path).known == {}
    path.write_bytes(b"not a zip file")
    assert load_memo(path).known == {}
    assert memo_path(tmp_path, DedupConfig(threshold=0.8)) != path


def test_text_keys_made_per_file_are_used_and_give_the_memo_the_same_pairs(monkeypatch):
    from dataclasses import replace

    from corpus_hygiene.dedup import near
    from corpus_hygiene.incremental.pair_memo import PairMemo, text_key

    cfg = DedupConfig(min_candidate_jaccard=0.0, bands=64, rows=2)
    records = _corpus_with_near_copies()
    plain_memo = PairMemo()
    plain = _outcome(*deduplicate(records, cfg, plain_memo))
    keyed = [replace(r, text_key=text_key(r.text)) for r in records]
    calls = []
    monkeypatch.setattr(near, "text_key", lambda t: calls.append(t) or text_key(t))
    memo = PairMemo()
    assert _outcome(*deduplicate(keyed, cfg, memo)) == plain
    assert calls == [] and memo.used == plain_memo.used
    assert memo.next_indexed.tolist() == plain_memo.next_indexed.tolist()


def test_a_pairs_similarity_does_not_depend_on_the_threshold():
    import dataclasses

    variants = [
        BASE,
        BASE.replace("detectors", "parsers").replace("small", "tiny"),  # high Jaccard, alignment higher
        BASE.replace("most of", "much of").replace("usual", "normal").replace("two hundred", "three hundred"),
        " ".join(BASE.split()[::-1]),  # reordered words: the alignment is low, the Jaccard decides
        BASE.split(" and show ")[0] + " and then something else entirely about graphs and proteins.",
    ]
    seen = {}
    for threshold in (0.7, 0.99):
        verified: list = []
        config = dataclasses.replace(DedupConfig(), threshold=threshold)
        find_near_duplicates(variants, config, verified=verified)
        seen[threshold] = {(i, j): s for i, j, s in verified}
    both = seen[0.7].keys() & seen[0.99].keys()
    assert len(both) >= 3 and all(seen[0.7][k] == seen[0.99][k] for k in both), seen


@given(st.frozensets(st.text(max_size=12), max_size=40), st.sampled_from([16, 128]), st.integers(0, 3))
def test_signer_gives_the_values_of_datasketchs_minhash(shingle_set, num_perm, seed):
    import xxhash
    from datasketch import MinHash

    from corpus_hygiene.dedup.minhash import Signer

    config = DedupConfig(num_perm=num_perm, bands=num_perm // 4, seed=seed)
    theirs = MinHash(num_perm=num_perm, seed=seed, hashfunc=xxhash.xxh32_intdigest, scheme="affine32")
    theirs.update_batch([s.encode() for s in shingle_set])
    assert Signer(config).sign(shingle_set).tolist() == theirs.hashvalues.tolist()
