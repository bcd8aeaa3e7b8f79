"""References: a run checked against datasets it must not repeat (duplicates of kind "reference") or
contain (quarantine reason "contaminated")."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpus_hygiene.ingest import discover
from corpus_hygiene.pipeline.assemble import assemble
from corpus_hygiene.pipeline.process import process_files
from corpus_hygiene.reference.contamination import Contamination, contained, index_items
from corpus_hygiene.reference.index import load, load_all
from corpus_hygiene.reference.source import ReferenceError, open_reference, open_references, self_reference

ABSTRACTS = [
    "We measure how quickly river deltas lose sediment when upstream dams trap the silt that used to reach "
    "the coast. Using forty years of satellite images of twelve deltas, we estimate the yearly loss of land "
    "and relate it to the storage of the reservoirs above each delta. Deltas below large reservoirs shrink "
    "three times faster than the others, and the loss begins within a decade of the dam's completion.",
    "Hospital wards record patients' vital signs every few hours, yet early warning scores use only the last "
    "reading. We train a small sequence model on the whole history of each stay and compare it with the "
    "standard score on data from four hospitals. The model raises an alarm six hours earlier for half of the "
    "patients who later need intensive care, at the same rate of false alarms per ward and day.",
    "Bees learn the colours of flowers that reward them with nectar, but little is known about how long they "
    "remember them. We trained bumblebees to associate blue discs with sugar water and tested them after "
    "delays of one to fourteen days. Most bees still chose blue after a week, and memory faded faster in "
    "colonies kept at higher temperatures, which suggests a cost of warm summers for pollination.",
    "Public transport agencies publish timetables, but buses rarely keep to them in dense traffic. We "
    "collect the positions of every bus in three cities for a year and learn the delay each stop adds at "
    "each hour. Passengers who plan with our predicted times instead of the timetable wait four minutes "
    "less on average, and the predictions stay accurate when a new line opens in the network.",
]
ITEM = "Which colour did the trained bumblebees still choose after a delay of one week in the test?"


def _corpus(folder, paragraphs, name="papers.txt"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("ICLR 2026 Papers\n\n" + "\n\n".join(paragraphs) + "\n", "utf-8")
    return folder


def _reference(path, texts, **columns):
    pq.write_table(pa.table({**columns, "text": texts}), path)
    return path


def _assemble(corpus, policy, refs=()):
    found = discover(corpus, policy.max_file_bytes)
    return assemble(process_files(found.files, policy), found.refused, [], policy, references=refs)


def _indexed(tmp_path, paths, policy):
    refs = [open_reference(str(p)) for p in paths]
    return load_all(refs, policy.dedup_config(), Contamination(), tmp_path / "index")


def test_copies_of_reference_rows_point_at_them_and_contained_items_are_quarantined(tmp_path, policy):
    edited = ABSTRACTS[1].replace("six hours earlier", "seven hours sooner").replace("four", "five")
    quoting = ABSTRACTS[3] + " " + ITEM
    corpus = _corpus(tmp_path / "in", [ABSTRACTS[0], edited, ABSTRACTS[2], ABSTRACTS[2], quoting])
    last_year = _reference(tmp_path / "last_year.parquet", ["unrelated", ABSTRACTS[0], ABSTRACTS[1]],
                           id=["a", "b", "c"])  # fmt: skip
    bench = _reference(tmp_path / "bench.parquet", [ITEM])  # no id column: file#row points at it
    asm = _assemble(corpus, policy, _indexed(tmp_path, [last_year, bench], policy))
    dups = {d["source_line"]: d for d in asm.duplicates}
    assert {
        line: (d["kind"], d["canonical_id"], d["canonical_ref"], d["reference"]) for line, d in dups.items()
    } == {
        3: ("reference", "b", "last_year.parquet#1", str(last_year)),
        5: ("reference", "c", "last_year.parquet#2", str(last_year)),
        9: ("exact", dups[9]["canonical_id"], "papers.txt:7", None),
    }
    assert dups[3]["similarity"] == 1.0 and 0.7 <= dups[5]["similarity"] < 1.0
    assert dups[3]["reason"] == f"same dedup key as last_year.parquet#1 in reference {last_year}"
    (dirty,) = [q for q in asm.quarantine if q["reason"] == "contaminated"]
    assert dirty["source_line"] == 11 and dirty["text_raw"] == quoting
    assert dirty["detail"].startswith(
        f"contains 100% of the 8-word spans of bench.parquet#0 in reference {bench}"
    )
    assert [r["source_line"] for r in asm.records] == [7]
    assert asm.counts == {"files": 1, "files_read": 1, "ingested": 5, "kept": 1, "duplicates": 3,
                          "reference_duplicates": 2, "quarantined": 1}  # fmt: skip


def test_a_record_that_repeats_a_run_record_and_a_reference_row_points_at_the_reference(tmp_path, policy):
    corpus = _corpus(tmp_path / "in", [ABSTRACTS[0], ABSTRACTS[0].replace("twelve", "eleven"), ABSTRACTS[2]])
    ref = _reference(tmp_path / "r.parquet", [ABSTRACTS[0]], record_id=["f" * 32])
    asm = _assemble(corpus, policy, _indexed(tmp_path, [ref], policy))
    assert [(d["source_line"], d["kind"], d["canonical_id"]) for d in asm.duplicates] == [
        (3, "reference", "f" * 32),
        (5, "reference", "f" * 32),
    ]
    assert [r["source_line"] for r in asm.records] == [7]


def test_without_references_the_tables_are_those_of_a_run_without_them(tmp_path, policy):
    corpus = _corpus(tmp_path / "in", [ABSTRACTS[0], ABSTRACTS[0], ABSTRACTS[1]])
    ref = _reference(tmp_path / "r.parquet", [ABSTRACTS[3]])
    plain, checked = _assemble(corpus, policy), _assemble(corpus, policy, _indexed(tmp_path, [ref], policy))
    for name in ("records", "duplicates", "quarantine"):
        assert list(getattr(plain, name)) == list(getattr(checked, name))


def test_a_near_negative_sharing_only_its_opening_is_not_a_reference_copy(tmp_path, policy):
    opening = ABSTRACTS[2].split(". ")[0]
    other = opening + ". " + ABSTRACTS[3]
    corpus = _corpus(tmp_path / "in", [other])
    asm = _assemble(
        corpus, policy, _indexed(tmp_path, [_reference(tmp_path / "r.parquet", [ABSTRACTS[2]])], policy)
    )
    assert len(asm.records) == 1 and not len(asm.duplicates)


def test_an_index_is_made_once_and_again_when_its_reference_changes(tmp_path, policy):
    path = _reference(tmp_path / "r.parquet", ABSTRACTS[:2])
    folder, config = tmp_path / "index", policy.dedup_config()
    first = load(open_reference(str(path), memo_path=folder / "hashes.json"), config, Contamination(), folder)
    again = load(open_reference(str(path), memo_path=folder / "hashes.json"), config, Contamination(), folder)
    assert first.built and not again.built and len(again) == 2
    _reference(path, ABSTRACTS[:3])
    changed = load_all([open_reference(str(path), memo_path=folder / "hashes.json")], config, Contamination(),
                       folder)  # fmt: skip
    assert changed[0].built and len(changed[0]) == 3
    assert len(list(folder.glob("*.arrow"))) == 2  # the index and its items; the old ones removed


def test_an_unchanged_reference_file_is_not_read_again_for_its_hash(tmp_path, monkeypatch):
    path = _reference(tmp_path / "r.parquet", ABSTRACTS[:1])
    memo = tmp_path / "hashes.json"
    first = open_reference(str(path), memo_path=memo).sha256
    read = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: read.append(p) or real_open(p, *a, **k))
    assert open_reference(str(path), memo_path=memo).sha256 == first and str(path) not in map(str, read)


def test_a_published_dataset_is_a_reference_by_its_records_and_ids(tmp_path):
    version = tmp_path / "v"
    version.mkdir()
    (version / "manifest.json").write_text("{}")
    _reference(version / "records.parquet", ABSTRACTS[:1], record_id=["0" * 32])
    pq.write_table(pa.table({"text": ["not this"]}), version / "duplicates.parquet")
    ref = open_reference(str(version))
    assert ref.files == ("records.parquet",) and ref.id_column == "record_id" and ref.clean


def test_a_reference_that_cannot_be_read_is_named_in_one_clear_error(tmp_path):
    with pytest.raises(ReferenceError, match="ref: no such file or folder"):
        open_reference(str(tmp_path / "ref"))
    (tmp_path / "ref").mkdir()
    with pytest.raises(ReferenceError, match="ref: no .parquet file in it"):
        open_reference(str(tmp_path / "ref"))
    (tmp_path / "ref" / "a.parquet").write_text("text\nhello\n")
    with pytest.raises(ReferenceError, match="a.parquet is not a readable Parquet file"):
        open_reference(str(tmp_path / "ref"))
    _reference(tmp_path / "ref" / "a.parquet", ["x"])
    with pytest.raises(ReferenceError, match="a.parquet has no column 'abstract' .*--reference-text-column"):
        open_reference(str(tmp_path / "ref"), "abstract")


words = st.lists(st.sampled_from("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda".split()),
                 min_size=8, max_size=30)  # fmt: skip


@given(item=words, before=st.lists(st.sampled_from(["mu", "nu", "xi"]), max_size=20), after=words)
def test_a_text_holding_an_item_contains_all_of_it_and_one_without_its_words_none(item, before, after):
    index = index_items([" ".join(item)], np.array([0]), 1, Contamination())
    best, share = contained([" ".join(before + item + after), " ".join(before) or "mu"], index)
    assert (best[0], share[0]) == (0, 1.0)
    assert (best[1], share[1]) == (-1, 0.0)


@given(item=words, text=words)
def test_containment_is_a_share_of_the_items_ngrams(item, text):
    index = index_items([" ".join(item)], np.array([0]), 1, Contamination(ngram=3))
    best, share = contained([" ".join(text)], index)
    grams = {tuple(item[i : i + 3]) for i in range(len(item) - 2)}
    has = {tuple(text[i : i + 3]) for i in range(len(text) - 2)}
    assert share[0] == pytest.approx(len(grams & has) / len(grams))
    assert best[0] == (0 if grams & has else -1)


def test_items_too_short_or_too_long_are_not_indexed():
    params = Contamination(ngram=8, min_words=6, max_words=12)
    texts = ["one two three", "a b c d e f g", " ".join(["w"] * 13), "一二三四五六七八"]
    index = index_items(texts, np.arange(4), 4, params)
    assert index.counts.tolist() == [0, 1, 0, 1]  # 7 words: one 7-word span; CJK characters are words
    best, share = contained(["so a b c d e f g too", "前一二三四五六七八后"], index)
    assert best.tolist() == [1, 3] and share.tolist() == [1.0, 1.0]


def test_the_index_maps_its_files_without_reading_them_whole(tmp_path, policy):
    path = _reference(tmp_path / "r.parquet", ABSTRACTS)
    indexed = _indexed(tmp_path, [path], policy)[0]
    assert indexed.texts(np.array([2])) == [ABSTRACTS[2]]
    assert indexed.pointers(np.array([3])) == ([None], ["r.parquet#3"])
    (start, rows), *_ = indexed.signature_slices()
    assert start == 0 and rows.shape == (4, policy.dedup_config().num_perm) and not rows.flags.owndata
    assert os.path.getsize(next((tmp_path / "index").glob("*[0-9a-f].arrow"))) > sum(map(len, ABSTRACTS))


def test_the_dataset_a_run_writes_is_no_reference_of_its_own(tmp_path):
    versions = tmp_path / ".clean.versions" / "run-1"
    versions.mkdir(parents=True)
    (tmp_path / "clean").symlink_to(versions)
    said = f"reference {tmp_path / 'clean'} is the dataset this run writes"
    assert self_reference([str(tmp_path / "clean")], tmp_path / "clean").startswith(said)
    assert self_reference([str(versions)], tmp_path / "clean") is not None
    assert self_reference([str(tmp_path / "other")], tmp_path / "clean") is None
    with pytest.raises(ReferenceError, match="is the dataset this run writes"):
        open_references([], [str(tmp_path / "clean")], "text", None, tmp_path / "clean")


def test_a_text_column_that_is_not_text_fails_the_run_with_one_sentence(tmp_path, policy):
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"text": pa.array([[1, 2]], pa.list_(pa.int64()))}), path)
    with pytest.raises(ReferenceError, match=f"reference {path} cannot be indexed"):
        _indexed(tmp_path, [path], policy)


def test_validate_follows_each_pointer_into_an_unchanged_reference(tmp_path):
    from corpus_hygiene.publish.read import pointer_failures

    path = _reference(tmp_path / "r.parquet", ABSTRACTS[:2], id=[3, 7])  # ids of any type, as strings
    described = open_reference(str(path)).describe()
    assert described["id"] == "id"
    rows = [("r.parquet#0", "3"), ("r.parquet#1", "7"), ("r.parquet#1", "3"), ("r.parquet#2", "x")]
    dups = pa.table({
        "kind": ["reference"] * 5 + ["exact"],
        "reference": [str(path)] * 4 + ["elsewhere.parquet", None],
        "canonical_id": [i for _, i in rows] + ["b", "0" * 32],
        "canonical_ref": [r for r, _ in rows] + ["x#0", "a.txt:3"],
    })  # fmt: skip
    assert pointer_failures({"references": [described]}, dups) == [
        "duplicates.reference: elsewhere.parquet is no reference of the manifest",
        f"duplicates.canonical_ref: r.parquet#1 is no row of id '3' in {path}",
        f"duplicates.canonical_ref: r.parquet#2 is no row of id 'x' in {path}",
    ]
    _reference(path, ABSTRACTS[:3], id=["a", "b", "c"])  # changed since: not followed
    assert pointer_failures({"references": [described]}, dups) == [
        "duplicates.reference: elsewhere.parquet is no reference of the manifest"
    ]
