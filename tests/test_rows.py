"""The staged tables (rows.StagedTable: records, duplicates, pairs): without a dict per row or their texts,
give what the dicts gave, to the byte."""

import hashlib
import sys
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.schemas import TABLES
from corpus_hygiene.dedup.exact import Duplicates, VerifiedPairs, why_kept
from corpus_hygiene.models import FileResult, SourceReport
from corpus_hygiene.publish.dataset import write_slices
from corpus_hygiene.store.records import RecordStore
from corpus_hygiene.store.rows import (
    Copies,
    DuplicateRows,
    PairRows,
    RecordRows,
    ReferenceCopies,
    columns,
    to_arrow,
)

from .test_cache import file_results

SCHEMA = TABLES["records"]


def _as_dict(rec, also):
    """A records-table row as the dataset contract describes it: every schema column, six of them made
    from the record, the others its fields."""
    made = {
        "n_chars": len(rec.text),
        "pii": {"email": rec.n_emails, "phone": rec.n_phones},
        "fixes": list(rec.fixes),
        "lost_words": list(rec.lost_words),
        "dup_count": len(also),
        "also_in": list(also),
    }
    return {f.name: made[f.name] if f.name in made else getattr(rec, f.name) for f in SCHEMA}


@st.composite
def record_rows(draw):
    """Records, and for some of them the records they stand for (indices: any records will do here)."""
    records = [r for result in draw(st.lists(file_results(), max_size=3)) for r in result.records]
    positions = draw(st.sets(st.integers(0, max(len(records) - 1, 0)), max_size=len(records)))
    copies = {i: draw(st.lists(st.integers(0, len(records) - 1), min_size=1, max_size=3))
              for i in positions if i < len(records)}  # fmt: skip
    return records, copies


def _store(records) -> RecordStore:
    store = RecordStore()
    store.add([FileResult(SourceReport("x.txt", 0), records, [], True)])
    return store


def _also_in(records, copies) -> dict[int, list[str]]:
    return {i: [f"{records[j].source_file}:{records[j].source_line}" for j in js] for i, js in copies.items()}


def staged(records, copies) -> RecordRows:
    """``records`` staged, as the flow stages them, and their rows."""
    store = _store(records)
    rows = [i for i in sorted(copies) for _ in copies[i]]
    of = [j for i in sorted(copies) for j in copies[i]]
    copies = Copies(np.array(rows, np.int64), np.array(of, np.int64), store.keys)
    return RecordRows(store.keys, np.arange(len(records)), copies, store)


@given(record_rows())
def test_rows_columns_and_arrow_equal_what_dicts_give(data):
    records, copies = data
    rows, also_in = staged(records, copies), _also_in(records, copies)
    dicts = [_as_dict(r, also_in.get(i, [])) for i, r in enumerate(records)]
    assert len(rows) == len(dicts) and list(rows) == dicts and rows[:] == dicts
    if dicts:
        assert rows[-1] == dicts[-1] and rows[1:3] == dicts[1:3]
    _check_columns(rows, dicts, SCHEMA)
    for lo, hi in ((0, len(dicts)), (1, 3), (len(dicts), len(dicts) + 5)):
        assert to_arrow(rows, lo, hi, SCHEMA).equals(pa.Table.from_pylist(dicts[lo:hi], schema=SCHEMA))


def _ref(rec) -> str:
    return f"{rec.source_file}:{rec.source_line}"


def _check_columns(rows, dicts, schema):
    """Every column, read 3 rows at a time: the dicts' values, with each slice's first row."""
    names = schema.names
    with mock.patch("corpus_hygiene.store.rows.READ_ROWS", 3):
        got = list(columns(rows, *names))
    assert [lo for lo, _ in got] == list(range(0, len(dicts), 3))
    for k, name in enumerate(names):
        assert [v for _, part in got for v in part[k]] == [d[name] for d in dicts]


def _check_rows(rows, dicts, schema):
    assert len(rows) == len(dicts) and list(rows) == dicts and rows[:] == dicts and rows[::2] == dicts[::2]
    if dicts:
        assert rows[-1] == dicts[-1] and rows[1:3] == dicts[1:3]
    _check_columns(rows, dicts, schema)
    for lo, hi in ((0, len(dicts)), (1, 3), (len(dicts), len(dicts) + 5)):
        assert to_arrow(rows, lo, hi, schema).equals(pa.Table.from_pylist(dicts[lo:hi], schema=schema))


@given(st.lists(file_results(), max_size=3), st.randoms(use_true_random=False))
def test_duplicate_rows_read_their_texts_back_and_give_what_dicts_give(results, rng):
    records = [r for result in results for r in result.records]
    store = _store(records)
    order = rng.sample(range(len(records)), len(records))  # a duplicates table's order is not the store's
    of = [rng.randrange(len(records)) for _ in order]
    near = [rng.random() < 0.5 for _ in order]
    sim = [round(rng.uniform(0.7, 1), 6) if n else 1.0 for n in near]
    dicts = [
        {"source_file": records[i].source_file, "source_line": records[i].source_line,
         "canonical_id": records[c].record_id, "canonical_ref": _ref(records[c]),
         "kind": "near" if n else "exact", "similarity": s, "reason": why_kept(store.keys[c], store.keys[i]),
         "reference": None, "text_raw": records[i].text_raw}
        for i, c, n, s in zip(order, of, near, sim, strict=True)
    ]  # fmt: skip
    dups = Duplicates(store.keys, *(np.array(c) for c in (order, of, near, sim)))
    _check_rows(DuplicateRows(dups, store), dicts, TABLES["duplicates"])


@given(st.lists(file_results(), max_size=3), st.randoms(use_true_random=False))
def test_reference_copies_join_the_duplicates_in_provenance_order(results, rng):
    records = [r for result in results for r in result.records]
    store = _store(records)
    theirs = sorted(rng.sample(range(len(records)), len(records) // 2))
    ours = [i for i in range(len(records)) if i not in theirs]
    dups = Duplicates(
        store.keys,
        *(
            np.array(c, dtype)
            for c, dtype in (
                (ours, np.int64),
                ([0] * len(ours), np.int64),
                ([False] * len(ours), bool),
                ([1.0] * len(ours), float),
            )
        ),
    )
    copies = ReferenceCopies(np.array(theirs, np.int64), ["ref.parquet"] * len(theirs),
                             [f"id{i}" for i in theirs], [f"part-0.parquet#{i}" for i in theirs],
                             np.full(len(theirs), 0.9), ["a near copy"] * len(theirs))  # fmt: skip
    dicts = [
        {"source_file": records[i].source_file, "source_line": records[i].source_line,
         "canonical_id": f"id{i}" if i in theirs else records[0].record_id,
         "canonical_ref": f"part-0.parquet#{i}" if i in theirs else _ref(records[0]),
         "kind": "reference" if i in theirs else "exact", "similarity": 0.9 if i in theirs else 1.0,
         "reason": "a near copy" if i in theirs else why_kept(store.keys[0], store.keys[i]),
         "reference": "ref.parquet" if i in theirs else None, "text_raw": records[i].text_raw}
        for i in sorted(ours + theirs, key=lambda i: (records[i].source_file, records[i].source_line))
    ]  # fmt: skip
    _check_rows(DuplicateRows(dups, store, copies), dicts, TABLES["duplicates"])


@given(st.lists(file_results(), max_size=3), st.randoms(use_true_random=False))
def test_pair_rows_give_what_dicts_give(results, rng):
    records = [r for result in results for r in result.records]
    store = _store(records)
    pairs = [(rng.randrange(len(records)), rng.randrange(len(records))) for _ in records]
    sim = [round(rng.uniform(0.4, 1), 6) for _ in pairs]
    merged = [s >= 0.7 for s in sim]
    dicts = [
        {"source_file": records[i].source_file, "source_line": records[i].source_line,
         "record_id": records[i].record_id, "candidate_id": records[j].record_id,
         "candidate_ref": _ref(records[j]), "similarity": s, "merged": m}
        for (i, j), s, m in zip(pairs, sim, merged, strict=True)
    ]  # fmt: skip
    columns = [np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)]
    rows = PairRows(VerifiedPairs(store.keys, *columns, np.array(sim, np.float64), np.array(merged, bool)))
    _check_rows(rows, dicts, TABLES["pairs"])


@settings(max_examples=40)
@given(record_rows())
def test_the_parquet_file_is_the_same_bytes_from_rows_or_dicts(data):
    from corpus_hygiene.publish import dataset

    records, copies = data
    also_in = _also_in(records, copies)
    dicts = [_as_dict(r, also_in.get(i, [])) for i, r in enumerate(records)]
    digests = []
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(dataset, "ROW_GROUP", 3)  # several row groups
        for name, rows in (("rows", staged(records, copies)), ("dicts", dicts)):
            path = Path(tmp) / f"{name}.parquet"
            for _ in write_slices(rows, SCHEMA, path):
                pass
            digests.append(hashlib.sha256(path.read_bytes()).hexdigest())
    assert digests[0] == digests[1]


def test_converting_rows_leaves_no_utf8_copy_on_the_texts_they_hold():
    """pyarrow converts a str through CPython's UTF-8 cache, which then stays on the str: a second copy
    of every non-ASCII text the duplicates rows hold, for the rest of the run."""
    text, zh = "Réseaux de neurones à grande échelle pour la détection d’anomalies", "图神经网络"
    dicts = [{"source_file": "a.txt", "source_line": i, "text_raw": t} for i, t in enumerate((text, zh * 20))]
    sizes = [sys.getsizeof(d["text_raw"]) for d in dicts]
    assert to_arrow(dicts, 0, 2, TABLES["duplicates"]).column("text_raw").to_pylist() == [text, zh * 20]
    assert [sys.getsizeof(d["text_raw"]) for d in dicts] == sizes
