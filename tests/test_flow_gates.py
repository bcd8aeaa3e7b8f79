"""The flow's gates step: it stages the new version's Parquet files from the slices it reads, and when
writing fails, it still gives the gates' verdict and leaves publishing to write the tables again."""

import pytest

from corpus_hygiene.assemble import assemble
from corpus_hygiene.dataset import StagedVersion, sha256_file
from corpus_hygiene.flows.hygiene import check_gates
from corpus_hygiene.ingest import discover
from corpus_hygiene.process import process_file

from .conftest import EXAMPLES


@pytest.fixture(scope="module")
def asm(policy):
    found = discover(EXAMPLES, policy.max_file_bytes)
    return assemble([process_file(f, policy) for f in found.files], found.refused, found.skipped, policy)


def test_the_gates_stage_the_version_they_read(asm, policy, tmp_path):
    staged = StagedVersion(tmp_path / "clean", "run-1")
    verdict = check_gates.fn(asm, policy, staged)
    assert verdict == check_gates.fn(asm, policy) and all(g.passed for g in verdict)
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
    assert check_gates.fn(asm, policy, staged) == check_gates.fn(asm, policy)
    assert not staged.open and not staged.path.exists()
