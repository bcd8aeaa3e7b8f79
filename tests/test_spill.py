"""spill.Spill: rows appended to parts on disk by their key's hash, read back a part at a time."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from corpus_hygiene.store.records import StagingError
from corpus_hygiene.store.spill import Spill, part_of

ROW = np.dtype([("key", "S16"), ("row", "<i8")])


def _rows(keys: list[bytes], first: int = 0) -> np.ndarray:
    rows = np.empty(len(keys), ROW)
    rows["key"], rows["row"] = keys, np.arange(first, first + len(keys))
    return rows


def test_every_row_comes_back_once_in_its_keys_part_in_the_order_added(tmp_path):
    rng = np.random.default_rng(7)
    keys = [bytes(k) for k in rng.integers(0, 256, (5000, 16), np.uint8)]
    keys += keys[:300]  # repeats: the same part as their first copy
    spill = Spill(ROW, tmp_path, parts=8)
    for lo in range(0, len(keys), 1000):
        spill.add(_rows(keys[lo : lo + 1000], lo))
    parts = list(spill.parts())
    assert sorted(np.concatenate(parts)["row"].tolist()) == list(range(len(keys)))
    for part in parts:
        assert (np.diff(part["row"]) > 0).all()  # within a part, in the order added
        assert len(set(part_of(part["key"], 8).tolist())) == 1
    assert max(map(len, parts)) < 1.25 * len(keys) / 8  # random keys spread evenly
    spill.remove()
    assert not spill.folder.exists() and list(tmp_path.iterdir()) == []


def test_keys_that_differ_only_in_low_bits_still_spread_over_the_parts():
    numbers = np.arange(1 << 16, dtype="<i8") << 32 | 7  # provenances: a file's number, then a line
    assert np.bincount(part_of(numbers, 64), minlength=64).min() > 0.8 * (1 << 16) / 64


def test_a_folder_that_cannot_be_written_is_a_clear_error(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(StagingError, match=r"cannot spill rows to .*a_file: Not a directory"):
        Spill(ROW, tmp_path / "a_file").add(_rows([b"a"]))
    spill = Spill(ROW, tmp_path)
    spill.add(_rows([b"a"]))
    shutil.rmtree(spill.folder)  # the disk went away under the run
    with pytest.raises(StagingError, match="cannot spill rows to .*: No such file or directory"):
        spill.add(_rows([b"a"]))


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_full_disk_is_an_error_never_rows_silently_lost(tmp_path):
    spill = Spill(ROW, tmp_path, parts=4)
    spill.folder = tmp_path / "full"
    spill.folder.mkdir()
    for p in range(4):  # every part's file on a disk with no space left
        (spill.folder / f"{p}.bin").symlink_to("/dev/full")
    with pytest.raises(StagingError, match="No space left on device"):
        spill.add(_rows([b"a", b"b", b"c", b"d", b"e"]))
