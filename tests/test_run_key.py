"""The unchanged re-run short-cut: the run key and when a published dataset counts as current."""

import dataclasses
import json
import os

from corpus_hygiene.incremental.file_cache import FileCache
from corpus_hygiene.incremental.run_key import current_version, hash_inputs, run_key, unchanged_version
from corpus_hygiene.ingest.discover import discover
from corpus_hygiene.publish.beside import Beside
from corpus_hygiene.publish.dataset import publish, sha256_file

from .test_dataset import _tables


def _published(target, key: str, run_id: str = "run-1"):
    """A version published by a run, which records its manifest in the cache as the flow does."""
    version = publish(target, run_id, _tables(3), {"run_key": key})
    FileCache(Beside(target).cache).after_publish([], "p", sha256_file(version / "manifest.json"))
    return version


def _key(folder, policy):
    found = discover(folder, policy.max_file_bytes)
    return run_key(found, hash_inputs(found), policy)


def test_run_key_changes_with_any_byte_file_or_policy_and_nothing_else(tmp_path, policy):
    (tmp_path / "a.txt").write_text("ICLR 2026 Papers\n\nOne abstract.\n", "utf-8")
    (tmp_path / "b.txt").write_text("ICLR 2025 Papers\n\nAnother one.\n", "utf-8")
    key = _key(tmp_path, policy)
    assert _key(tmp_path, policy) == key  # stable: no time, no absolute path, no order
    (tmp_path / "b.txt").write_text("ICLR 2025 Papers\n\nAnother one!\n", "utf-8")
    changed = _key(tmp_path, policy)
    assert changed != key
    (tmp_path / "c.txt").write_text("", "utf-8")
    assert _key(tmp_path, policy) not in {key, changed}
    (tmp_path / "c.txt").unlink()
    assert _key(tmp_path, policy) == changed
    assert _key(tmp_path, dataclasses.replace(policy, sha256="0" * 64)) != changed


def test_current_only_for_the_same_key_and_an_intact_dataset(tmp_path):
    target = tmp_path / "clean"
    assert current_version(target, "k1") is None  # nothing published yet
    version = publish(target, "run-1", _tables(3), {"run_key": "k1"})
    assert current_version(target, "k1") is None  # no record of a run publishing it: rebuilt
    version = _published(target, "k1", "run-2")
    assert current_version(target, "k1") == version.name
    assert current_version(target, "k2") is None
    (version / "records.parquet").write_bytes(b"damaged")
    assert current_version(target, "k1") is None  # a damaged dataset is rebuilt, not trusted


def test_a_version_whose_report_is_gone_is_not_current(tmp_path):
    """After the reports folder is lost, a re-run makes the dataset and its report again instead of
    saying "unchanged" about a version nobody can read a report of."""
    target, reports = tmp_path / "clean", tmp_path / "reports"
    version = _published(target, "k1")
    assert current_version(target, "k1", reports) is None
    reports.mkdir()
    (reports / f"{version.name}.html").write_text("<html></html>")
    assert current_version(target, "k1", reports) == version.name


def test_a_table_edited_together_with_its_checksum_is_not_current(tmp_path):
    target = tmp_path / "clean"
    version = _published(target, "k1")
    (version / "records.parquet").write_bytes(b"edited")
    manifest = json.loads((version / "manifest.json").read_text("utf-8"))
    manifest["outputs"]["records.parquet"]["sha256"] = sha256_file(version / "records.parquet")
    (version / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    assert current_version(target, "k1") is None  # was "unchanged" for ever


def test_a_different_key_reads_no_published_file(tmp_path, monkeypatch):
    import corpus_hygiene.publish.read as reader

    target = tmp_path / "clean"
    _published(target, "k1")
    read = []
    real = reader.sha256_file
    monkeypatch.setattr(reader, "sha256_file", lambda path: read.append(path.name) or real(path))
    assert current_version(target, "k2") is None and read == []
    assert current_version(target, "k1") is not None and "records.parquet" in read


def test_unchanged_version_is_the_published_one_only_for_the_same_inputs(tmp_path, policy):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_text("ICLR 2026 Papers\n\nOne abstract.\n", "utf-8")
    target, reports = str(tmp_path / "clean"), str(tmp_path / "reports")
    assert unchanged_version(str(folder), target, reports, policy) is None
    version = _published(tmp_path / "clean", _key(folder, policy))
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / f"{version.name}.html").write_text("<html></html>")  # as a run writes it
    assert unchanged_version(str(folder), target, reports, policy) == version.name
    (folder / "b.txt").write_text("ICLR 2025 Papers\n\nAnother one.\n", "utf-8")
    assert unchanged_version(str(folder), target, reports, policy) is None
    # errors are the flow's to report: no short-cut, no exception here
    assert unchanged_version(str(tmp_path / "missing"), target, reports, policy) is None


def test_a_file_rewritten_in_place_is_hashed_again_and_an_untouched_one_is_not(tmp_path, monkeypatch):
    """The CLI's check and the flow it starts hash the same inputs: the second reads only what changed."""
    import corpus_hygiene.incremental.run_key as rk

    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("a.txt", "b.txt"):
        (folder / name).write_text(f"ICLR 2026 Papers\n\n{name}\n", "utf-8")
    first = hash_inputs(discover(str(folder), 1 << 20))
    reads = []
    real_read = os.read
    monkeypatch.setattr(rk.os, "read", lambda fd, n: reads.append(fd) or real_read(fd, n))
    assert hash_inputs(discover(str(folder), 1 << 20)) == first and reads == []
    (folder / "b.txt").write_text("ICLR 2026 Papers\n\nb.txt\n", "utf-8")  # same bytes, written again
    (folder / "a.txt").write_text("ICLR 2026 Papers\n\nchanged\n", "utf-8")
    again = hash_inputs(discover(str(folder), 1 << 20))
    assert again["b.txt"] == first["b.txt"] and again["a.txt"] != first["a.txt"] and len(reads) >= 2


def test_a_file_that_changed_while_read_is_read_again_by_the_next_run(tmp_path, policy):
    from corpus_hygiene.incremental.run_key import hashes_read
    from corpus_hygiene.pipeline.process import process_file

    (tmp_path / "a.txt").write_text("ICLR 2026 Papers\n\nAn abstract about graphs and their use.\n")
    found = discover(tmp_path, 1 << 20)
    os.utime(tmp_path / "a.txt", ns=(1, 1))  # modified after discovery, before it is read
    result = process_file(found.files[0], policy)
    assert result.source.problem == "changed_during_run"
    published = run_key(found, hashes_read([result.source]), policy)
    again = discover(tmp_path, 1 << 20)  # the next run: the same bytes, now settled
    assert run_key(again, hash_inputs(again), policy) != published
