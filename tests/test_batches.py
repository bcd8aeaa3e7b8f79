"""How the per-file stage's files are cut into tasks (pipeline/batches.py)."""

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from corpus_hygiene.models import SourceFile
from corpus_hygiene.pipeline.batches import batches, label


def _files(sizes: list[int]) -> list[SourceFile]:
    return [SourceFile(f"f{i:05d}.txt", Path(f"f{i:05d}.txt"), s) for i, s in enumerate(sizes)]


@given(
    st.lists(st.integers(0, 5_000), max_size=200),
    st.integers(1, 8),
    st.integers(1, 20_000),
    st.integers(1, 40),
)
def test_every_file_once_in_order_within_the_limits(sizes, workers, max_bytes, max_files):
    files = _files(sizes)
    got = batches(files, workers, max_bytes=max_bytes, max_files=max_files, min_bytes=max_bytes // 4)
    assert [f for b in got for f in b] == files
    assert all(b and len(b) <= max_files for b in got)
    assert all(sum(f.size for f in b) <= max_bytes for b in got if len(b) > 1)  # a larger file alone


def test_batches_shrink_towards_the_end_so_that_workers_finish_together():
    files = _files([50_000 + (i * 7919) % 5_000 for i in range(2_000)])
    sizes = [sum(f.size for f in b) for b in batches(files, 2, min_bytes=256 << 10)]
    assert sizes[-1] <= 256 << 10 < sizes[0]
    tail = sizes[len(sizes) // 2 :]
    # each no larger than the one before, but near the floor (whole files of ~50 KB make up a batch)
    assert all(b <= a or b <= (256 + 50) << 10 for a, b in zip(tail, tail[1:], strict=False))


def test_a_batch_is_named_by_its_first_file():
    files = _files([1, 2, 3])
    assert label(files) == "f00000.txt and 2 more"
    assert label(files[:1]) == "f00000.txt"
