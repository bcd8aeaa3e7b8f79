"""The gates step (checks/gates.py: gate_and_stage): it stages the new version's Parquet files from the
slices it reads, and when writing fails, it still gives the gates' verdict and leaves publishing to
write the tables again."""

import pytest

from corpus_hygiene.ingest import discover
from corpus_hygiene.pipeline.assemble import assemble
from corpus_hygiene.pipeline.process import process_file
from corpus_hygiene.publish.dataset import StagedVersion, gate_and_stage, sha256_file

from .conftest import EXAMPLES


@pytest.fixture(scope="module")
def asm(policy):
    found = discover(EXAMPLES, policy.max_file_bytes)
    return assemble([process_file(f, policy) for f in found.files], found.refused, found.skipped, policy)


def test_the_gates_stage_the_version_they_read(asm, policy, tmp_path):
    staged = StagedVersion(tmp_path / "clean", "run-1")
    verdict = gate_and_stage(asm, policy, staged)
    assert verdict == gate_and_stage(asm, policy) and all(g.passed for g in verdict)
    version = staged.commit({})
    plain = StagedVersion(tmp_path / "plain", "run-1")
    for name, rows in asm.tables().items():
        plain.write(name, rows)
    again = plain.commit({})
    for name in ("records", "duplicates", "quarantine"):
        assert sha256_file(version / f"{name}.parquet") == sha256_file(again / f"{name}.parquet")


def test_a_failed_write_leaves_the_verdict_and_nothing_staged(asm, policy, tmp_path):
    staged = StagedVersion(tmp_path / "clean", "run-1")

    def disk_full(name, rows):
        raise OSError(28, "No space left on device")
        yield

    staged.write_slices = disk_full
    assert gate_and_stage(asm, policy, staged) == gate_and_stage(asm, policy)
    assert not staged.open and not staged.path.exists()


def test_only_files_read_from_the_cache_and_listed_as_checked_skip_the_row_checks(policy, tmp_path):
    from corpus_hygiene.incremental.file_cache import FileCache

    cache = FileCache(tmp_path / "cache")
    found = discover(EXAMPLES, policy.max_file_bytes)
    first = assemble([process_file(f, policy, cache) for f in found.files], found.refused, [], policy)
    cache.set_contract_checked(cache.keys_of(first.sources, policy.sha256))
    assert cache.checked_files(first.sources, policy.sha256) == frozenset()  # none from the cache
    again = assemble([process_file(f, policy, cache) for f in found.files], found.refused, [], policy)
    listed = {s.source_file for s in again.sources if s.sha256}
    assert len(listed) >= 8 and cache.checked_files(again.sources, policy.sha256) == listed
    one = next(s for s in again.sources if s.source_file in listed)
    cache.set_contract_checked(cache.keys_of([one], policy.sha256))
    assert cache.checked_files(again.sources, policy.sha256) == {one.source_file}
    # the gates' verdict is the same whatever they trust
    assert gate_and_stage(again, policy, None, frozenset(listed)) == gate_and_stage(again, policy)


def test_the_keys_compared_across_rows_are_spilled_to_the_scratch_folder_and_removed(asm, policy, tmp_path):
    from corpus_hygiene.store.spill import StagingError

    assert gate_and_stage(asm, policy, scratch=tmp_path) == gate_and_stage(asm, policy)
    assert list(tmp_path.iterdir()) == []  # the spill went with the verdict
    (tmp_path / "a_file").write_text("")
    with pytest.raises(StagingError, match=r"cannot spill rows to .*a_file: Not a directory"):
        gate_and_stage(asm, policy, scratch=tmp_path / "a_file")
