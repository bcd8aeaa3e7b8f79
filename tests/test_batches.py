"""How the per-file stage's files are cut into tasks (flows/hygiene.py: batches)."""

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from corpus_hygiene.flows.hygiene import BATCH_FILES, batches
from corpus_hygiene.models import SourceFile


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


def test_the_benchmark_shape_makes_few_tasks_that_shrink_towards_the_end():
    # 2,000 files of ~50 KB (the 100k benchmark corpus): 36 tasks of at most 64 files before
    files = _files([50_000 + (i * 7919) % 5_000 for i in range(2_000)])
    got = batches(files, 2)
    sizes = [sum(f.size for f in b) for b in got]
    assert len(got) == 17
    assert len(got[0]) == BATCH_FILES
    assert sizes[-1] <= 1 << 20 and sizes[-2] <= 1 << 20  # the last tasks take ~1 s of work each
    assert all(a >= b for a, b in zip(sizes[4:], sizes[5:-1], strict=False))  # then they shrink
    assert len(batches(files, 1)) < len(got)  # one worker: no need to end together


def test_on_dask_the_last_batches_are_smaller_and_each_is_a_plain_dask_task():
    from corpus_hygiene.checks import load_policy
    from corpus_hygiene.flows import hygiene
    from corpus_hygiene.pipeline.process import process_files

    class Client:  # a two-worker cluster's client: what _submit asks of it
        def __init__(self):
            self.mapped = []

        def scheduler_info(self):
            return {"workers": {"a": {"nthreads": 1}, "b": {"nthreads": 1}}}

        def map(self, fn, groups, **kwargs):
            self.mapped.append((fn, groups, kwargs))
            return [object() for _ in groups]

    client = Client()
    files = _files([50_000 + (i * 7919) % 5_000 for i in range(2_000)])
    futures = hygiene._submit(files, load_policy(), None, client)
    [(fn, groups, kwargs)] = client.mapped
    assert fn is process_files and kwargs["pure"] is False and kwargs["cache"] is None
    assert len(futures) == len(groups) == 22  # 17 with the 1 MB floor (test above)
    assert [f for g in groups for f in g] == files
    assert all(sum(f.size for f in g) <= hygiene.MIN_DASK_BATCH_BYTES for g in groups[-4:])
    assert hygiene._submit([], load_policy(), None, client) == []
