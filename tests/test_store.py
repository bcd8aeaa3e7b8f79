"""RecordStore: records staged on disk a batch at a time read back by position, field for field."""

import gc
import pickle
import shutil
import time
from collections import Counter
from dataclasses import asdict, fields, replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_hygiene.models import FileResult, Record, Rejected
from corpus_hygiene.store.keys import RecordKey
from corpus_hygiene.store.records import (
    REJECTED_SCHEMA,
    STAGED_SCHEMA,
    RecordStore,
    StagingError,
    pack,
    pack_rejected,
)
from corpus_hygiene.store.rows import QuarantineRows

from .test_cache import file_results


def _checked(result: FileResult) -> FileResult:
    return replace(result, checked=True)


@settings(max_examples=60)
@given(st.lists(st.lists(file_results(), max_size=3), max_size=4), st.randoms(use_true_random=False))
def test_staged_columns_read_back_equal_to_the_records_in_any_order(batches, rng):
    """Batches staged as they come (the flow's process) or packed first (a Dask worker's, pickled)."""
    store = RecordStore()
    records: list[Record] = []
    for batch in batches:
        batch = [_checked(r) for r in batch]
        records += [rec for r in batch for rec in r.records]
        back = store.add(pickle.loads(pickle.dumps(pack(batch))) if rng.random() < 0.5 else batch)
        assert [(r.source, r.rejected, r.records) for r in back] == [(r.source, [], []) for r in batch]
    assert len(store) == len(records)
    assert list(store.keys) == [
        RecordKey(i, r.source_file, r.source_line, len(r.fixes), len(r.text), r.lang)
        for i, r in enumerate(records)
    ]
    assert store.keys.values("record_id") == [r.record_id for r in records]
    ids = sorted(
        (k.ljust(16, b"\0").hex(), int(p))
        for part, _ in store.id_parts()
        for k, p in zip(part["key"], part["pos"], strict=True)
    )
    assert ids == sorted((r.record_id, i) for i, r in enumerate(records))
    order = list(range(len(records)))
    rng.shuffle(order)
    for f in fields(Record):
        want = [getattr(records[i], f.name) for i in order]
        got = store.take([f.name], order).column(0).to_pylist()
        assert got == [list(v) if isinstance(v, tuple) else v for v in want], f.name
    for i in order[:3]:
        row = store.take(STAGED_SCHEMA.names, [i]).to_pylist()[0]
        assert {k: tuple(v) if isinstance(v, list) else v for k, v in row.items()} == {
            f.name: getattr(records[i], f.name) for f in fields(Record)
        }


_rejections = st.lists(
    st.builds(
        Rejected,
        source_file=st.sampled_from(["a.txt", "b/c.txt", "é.txt", "Z.txt", "论文.txt"]),
        source_line=st.one_of(st.none(), st.integers(1, 4)),
        reason=st.sampled_from(["too_short", "binary_file", "stopword_share"]),
        detail=st.text(max_size=5),
        text_raw=st.one_of(st.none(), st.text(st.characters(exclude_categories=["Cs"]), max_size=8)),
    ),
    max_size=6,
)


@settings(max_examples=100)
@given(st.lists(st.lists(_rejections, max_size=3), max_size=4), _rejections)
def test_staged_rejections_read_back_as_the_quarantine_table_sorted_in_memory(batches, refused):
    """The rows, their order (file, line with a whole file first, reason; ties as staged) and the reason
    counts are those of the Rejected objects sorted in memory."""
    store, rejected = RecordStore(), []
    for batch in batches:
        rejected += [rej for rows in batch for rej in rows]
        store.add([FileResult(None, [], rows, True) for rows in batch])
    store.add(pack_rejected(refused))
    rejected += refused
    keys = store.rejected_keys
    want = sorted(
        (asdict(r) for r in rejected),
        key=lambda r: (r["source_file"], -1 if r["source_line"] is None else r["source_line"], r["reason"]),
    )
    rows = QuarantineRows(keys.order(), store)
    assert list(rows) == want and rows[1:3] == want[1:3]
    assert rows.column("text_raw") == [r["text_raw"] for r in want]
    assert rows.arrow(0, len(rows), REJECTED_SCHEMA).to_pylist() == want
    assert keys.reason_counts() == dict(sorted(Counter(r.reason for r in rejected).items()))


def _add(store: RecordStore, texts: list[str]) -> None:
    recs = [
        Record("a.txt", i + 3, None, None, "Papers", "en", t, t, "en", 1.0, (), f"{i:032x}")
        for i, t in enumerate(texts, start=len(store))
    ]
    store.add([FileResult(None, recs, [], True)])


def _store_of(texts: list[str], per_batch: int) -> RecordStore:
    store = RecordStore()
    for lo in range(0, len(texts), per_batch):
        _add(store, texts[lo : lo + per_batch])
    return store


def test_a_column_reads_by_index_slice_iteration_and_index_array():
    texts = [f"text {i}" for i in range(10)]
    store = _store_of(texts, 3)  # four files
    keys = store.keys[::-1]
    column = store.column("text", keys.pos)
    assert len(column) == 10 and column[0] == "text 9" and column[-1] == "text 0"
    assert column[2:5] == ["text 7", "text 6", "text 5"]
    assert list(column) == texts[::-1]
    assert column.take(np.array([9, 0, 4])) == ["text 0", "text 9", "text 5"]
    assert store.take(["text"], []).column(0).to_pylist() == []


def _mapped_a_second_later(folder: Path) -> bool:
    """Whether a file of ``folder`` is still mapped in this process after up to a second: under load,
    one of Arrow's pool threads drops its reference to a map a moment after the read returns."""
    deadline = time.monotonic() + 1.0
    while str(folder) in Path("/proc/self/maps").read_text():
        if time.monotonic() > deadline:
            return True
        time.sleep(0.01)
    return False


def test_no_staged_file_stays_mapped_once_its_keys_or_columns_are_read():
    """A view of a mapped file (a key column, a slice) would keep the file's pages in the process."""
    store = _store_of([f"text {i}" for i in range(10)], 3)
    keys, texts = store.keys, store.column("text", store.keys.pos)[2:9]
    assert not _mapped_a_second_later(store.folder) and len(keys) == 10 and len(texts) == 7


def test_the_store_folder_goes_with_remove_or_with_the_store(tmp_path):
    store = _store_of(["a", "b"], 1)
    folder = store.folder
    assert len(list(folder.glob("*.arrow"))) == 2
    del store
    gc.collect()
    assert not folder.exists()
    mine = RecordStore(tmp_path / "records")
    mine.add([FileResult(None, [], [], True)])  # no records: no file, only the tool's mark
    assert [p.name for p in (tmp_path / "records").iterdir()] == [".corpus-hygiene-partial"]
    mine.remove()
    assert not (tmp_path / "records").exists()


def test_unchecked_records_are_refused_not_staged_unchecked():
    rec = Record("a.txt", 3, None, None, "Papers", "en", "t", "t", "en", 1.0, (), "0" * 32)
    with pytest.raises(ValueError, match="checked"):
        pack([FileResult(None, [rec], [], False)])


def test_a_staging_folder_that_cannot_be_made_or_written_is_a_clear_error(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(StagingError, match=r"cannot stage records in .*a_file/records: Not a directory"):
        RecordStore(tmp_path / "a_file" / "records")
    store = _store_of(["a"], 1)
    shutil.rmtree(store.folder)  # the disk went away under the run
    with pytest.raises(StagingError, match="cannot stage records in .*: No such file or directory"):
        _add(store, ["b"])


def test_the_accounting_names_a_line_quarantined_twice_and_a_problem_file_without_its_row():
    from corpus_hygiene.models import SourceReport
    from corpus_hygiene.pipeline.assemble import AccountingError, assemble

    row = Rejected("a.txt", 3, "too_short", "3 characters", "abc")
    twice = FileResult(SourceReport("a.txt", 10, n_paragraphs=2), [], [row, row], True)
    with pytest.raises(AccountingError, match=r"counted twice or unknown: a\.txt:3$"):
        assemble([twice], [])
    silent = FileResult(SourceReport("b.bin", 10, problem="binary_file"), [], [], True)
    with pytest.raises(AccountingError, match=r"ingested 1 != .* quarantined 0 \(0\); missing: b\.bin$"):
        assemble([silent], [])
    refused = Rejected("c.txt", None, "broken_symlink", "its target does not exist")
    assert assemble([], [refused]).quarantine[:] == [asdict(refused)]
