"""The same inputs give byte-identical Parquet files, whatever the order files are processed in."""

from corpus_hygiene.ingest import discover
from corpus_hygiene.pipeline.assemble import assemble
from corpus_hygiene.pipeline.process import process_file
from corpus_hygiene.publish.dataset import publish, sha256_file

from .conftest import EXAMPLES


def _publish(target, policy, reverse=False):
    found = discover(EXAMPLES, policy.max_file_bytes)
    files = list(reversed(found.files)) if reverse else found.files
    results = [process_file(f, policy) for f in files]  # reversed order reaches assemble as is
    asm = assemble(results, found.refused, found.skipped, policy)
    version = publish(target, "run", asm.tables(), {})
    return {
        name: sha256_file(version / f"{name}.parquet") for name in ("records", "duplicates", "quarantine")
    }


def test_two_runs_give_identical_parquet(tmp_path, policy):
    assert _publish(tmp_path / "a", policy) == _publish(tmp_path / "b", policy, reverse=True)
