"""rows.RecordRows and DuplicateRows: tables without a dict per row, or without their texts, give what
the dicts gave, to the byte."""

import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_hygiene.models import FileResult, SourceReport
from corpus_hygiene.pipeline.rows import DuplicateRows, RecordRows, column, to_arrow
from corpus_hygiene.pipeline.staging import RecordStore
from corpus_hygiene.publish.dataset import TABLES, write_slices

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
    records = [r for result in draw(st.lists(file_results(), max_size=3)) for r in result.records]
    positions = draw(st.sets(st.integers(0, max(len(records) - 1, 0)), max_size=len(records)))
    also_in = {i: sorted(draw(st.lists(st.sampled_from(["x.txt:3", "y.txt:9", "z.txt:1"]), min_size=1)))
               for i in positions if i < len(records)}  # fmt: skip
    return records, also_in


def staged(records, also_in) -> RecordRows:
    """``records`` staged, as the flow stages them, and their rows."""
    store = RecordStore()
    store.add([FileResult(SourceReport("x.txt", 0), records, [], True)])
    return RecordRows(store.keys, also_in, store)


@given(record_rows())
def test_rows_columns_and_arrow_equal_what_dicts_give(data):
    records, also_in = data
    rows = staged(records, also_in)
    dicts = [_as_dict(r, also_in.get(i, [])) for i, r in enumerate(records)]
    assert len(rows) == len(dicts) and list(rows) == dicts and rows[:] == dicts
    if dicts:
        assert rows[-1] == dicts[-1] and rows[1:3] == dicts[1:3]
    for field in SCHEMA:
        assert column(rows, field.name) == column(dicts, field.name)
    for lo, hi in ((0, len(dicts)), (1, 3), (len(dicts), len(dicts) + 5)):
        assert to_arrow(rows, lo, hi, SCHEMA).equals(pa.Table.from_pylist(dicts[lo:hi], schema=SCHEMA))


@given(st.lists(file_results(), max_size=3), st.randoms(use_true_random=False))
def test_duplicate_rows_read_their_texts_back_and_give_what_dicts_give(results, rng):
    records = [r for result in results for r in result.records]
    store = RecordStore()
    store.add([FileResult(SourceReport("x.txt", 0), records, [], True)])
    order = rng.sample(range(len(records)), len(records))  # a duplicates table's order is not the store's
    dicts = [
        {"source_file": records[i].source_file, "source_line": records[i].source_line, "canonical_id": "c",
         "canonical_ref": "c.txt:1", "kind": "exact", "similarity": 1.0, "reason": "r",
         "text_raw": records[i].text_raw}
        for i in order
    ]  # fmt: skip
    rows = DuplicateRows(
        [{k: v for k, v in d.items() if k != "text_raw"} for d in dicts], np.array(order), store
    )
    assert len(rows) == len(dicts) and list(rows) == dicts and rows[:] == dicts and rows[::2] == dicts[::2]
    if dicts:
        assert rows[-1] == dicts[-1] and rows[1:3] == dicts[1:3]
    schema = TABLES["duplicates"]
    for field in schema:
        assert column(rows, field.name) == column(dicts, field.name)
    for lo, hi in ((0, len(dicts)), (1, 3), (len(dicts), len(dicts) + 5)):
        assert to_arrow(rows, lo, hi, schema).equals(pa.Table.from_pylist(dicts[lo:hi], schema=schema))


@settings(max_examples=40)
@given(record_rows())
def test_the_parquet_file_is_the_same_bytes_from_rows_or_dicts(data):
    from corpus_hygiene.publish import dataset

    records, also_in = data
    dicts = [_as_dict(r, also_in.get(i, [])) for i, r in enumerate(records)]
    digests = []
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(dataset, "ROW_GROUP", 3)  # several row groups
        for name, rows in (("rows", staged(records, also_in)), ("dicts", dicts)):
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
