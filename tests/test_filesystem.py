"""Survives its filesystem (issue 34): odd names, files that change mid-run, damaged caches and
manifests, outputs inside the input folder, failed report writes, readers during a publish, crashes
between steps, oversized paragraphs. Each test reproduces one cause; the runs are real `hygiene run`s."""

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from corpus_hygiene.publish.read import verify_checksums

from .conftest import EXAMPLES, ROOT, parquet_checksums
from .fault_run import STEPS as FAULT_STEPS
from .test_dataset import _tables

HYGIENE = str(Path(sys.executable).with_name("hygiene"))
SAMPLE = (EXAMPLES / "iclr_2026_papers.txt").read_bytes()  # a header and six abstracts


def hygiene(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([HYGIENE, *args], capture_output=True, text=True, timeout=600, env=env)


def run(corpus: Path, out: Path, *extra: str, env: dict) -> subprocess.CompletedProcess:
    return hygiene("run", str(corpus), "--dataset-dir", str(out / "clean"), "--reports-dir",
                   str(out / "reports"), *extra, env=env)  # fmt: skip


def table(dataset: Path, name: str = "records") -> list[dict]:
    return pq.read_table(dataset / f"{name}.parquet").to_pylist()


@pytest.mark.slow
def test_a_file_name_with_bytes_that_are_not_utf8_is_read_and_published_escaped(tmp_path, prefect_server):
    corpus = tmp_path / "in"
    corpus.mkdir()
    (corpus / os.fsdecode(b"iclr caf\xe9 2026.txt")).write_bytes(SAMPLE)  # Latin-1 é: not UTF-8
    (corpus / "ok.txt").write_bytes(SAMPLE.replace(b"ICLR 2026", b"ICML 2025"))
    first = run(corpus, tmp_path / "out", env=prefect_server)
    assert first.returncode == 0, first.stderr[-3000:]
    names = {r["source_file"] for r in table(tmp_path / "out" / "clean", "duplicates")}
    names |= {r["source_file"] for r in table(tmp_path / "out" / "clean")}
    assert names == {"iclr caf\\xe9 2026.txt", "ok.txt"}
    manifest = json.loads((tmp_path / "out" / "clean" / "manifest.json").read_text("utf-8"))
    assert [f["source_file"] for f in manifest["input_files"]] == ["iclr caf\\xe9 2026.txt", "ok.txt"]
    again = run(
        corpus, tmp_path / "out", "--no-cache", env=prefect_server
    )  # the cache's own path (first run wrote it)
    assert again.returncode == 0, again.stderr[-3000:]


def _memo(tmp_path):
    from corpus_hygiene.dedup.config import DedupConfig
    from corpus_hygiene.incremental.pair_memo import INDEX_KEY, PairMemo, memo_path, save_memo, text_key

    memo = PairMemo()
    for i in range(5):
        memo.put((text_key(f"a{i}"), text_key(f"b{i}")), 0.5 + i / 10)
    a0, b0 = (np.frombuffer(text_key(t) + b"\x00", INDEX_KEY) for t in ("a0", "b0"))
    memo.record_candidates(a0, np.stack([a0, b0], axis=1))
    path = memo_path(tmp_path, DedupConfig())
    assert save_memo(path, memo) is None
    return path, memo


def test_a_damaged_pair_memo_is_recomputed_never_an_error(tmp_path):

    from corpus_hygiene.incremental.pair_memo import load_memo

    path, memo = _memo(tmp_path)
    assert load_memo(path).known == memo.used and load_memo(path).problem is None
    good = path.read_bytes()
    with np.load(path) as data:
        arrays = dict(data)
    inconsistent = tmp_path / "inconsistent.npz"
    np.savez(inconsistent, **(arrays | {"sim": arrays["sim"][:2]}))  # fewer similarities than pairs
    altered = tmp_path / "altered.npz"
    np.savez(altered, **(arrays | {"sim": arrays["sim"] + 0.3}))  # readable, wrong: the digest says so
    for damage in (good[: len(good) // 2], b"", inconsistent.read_bytes(), altered.read_bytes()):
        path.write_bytes(damage)
        again = load_memo(path)  # was BadZipFile, EOFError, ValueError: every later run failed
        assert again.known == {} and again.problem.startswith(f"pair memo {path.name} unreadable"), damage[:8]


def test_cache_entries_that_are_damaged_altered_or_folders_are_recomputed(tmp_path, policy):
    from corpus_hygiene.incremental.file_cache import FileCache
    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline.process import process_file

    cache = FileCache(tmp_path / "cache")
    (src,) = [f for f in discover(EXAMPLES, policy.max_file_bytes).files if f.rel_path == "fr/taln_2025.txt"]
    first = process_file(src, policy, cache)
    (entry,) = cache.entries()
    blob = bytearray(entry.read_bytes())
    blob[-40] ^= 1  # one bit of a decodable entry: the digest catches it
    entry.write_bytes(bytes(blob))
    again = process_file(src, policy, cache)
    assert not again.source.cached and again.records == first.records
    assert cache.problems[-1].endswith("unreadable (ValueError: the entry does not match its digest)")
    entry.unlink()
    entry.mkdir()  # a folder under the entry's name: was a traceback
    (entry / "x").write_text("")
    assert not process_file(src, policy, cache).source.cached
    assert entry.is_file() and process_file(src, policy, cache).source.cached  # rewritten, then read


def test_cache_writes_on_a_full_disk_leave_no_temporary_files_and_no_error(tmp_path, policy, monkeypatch):
    import errno
    import os as os_module

    from corpus_hygiene import atomic
    from corpus_hygiene.incremental.file_cache import FileCache
    from corpus_hygiene.incremental.pair_memo import save_memo
    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline.process import process_file

    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "abc.json.zst.tmp4242").write_bytes(b"left by a run that died")
    cache = FileCache(tmp_path / "cache")
    assert list(cache.folder.iterdir()) == []  # a dead run's temporary file is removed

    def full(src, dst):
        raise OSError(errno.ENOSPC, os_module.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "replace", full)
    (src,) = [f for f in discover(EXAMPLES, policy.max_file_bytes).files if f.rel_path == "fr/taln_2025.txt"]
    result = process_file(src, policy, cache)  # was a traceback, and a *.tmp file left behind
    assert len(result.records) == 2 and list(cache.folder.iterdir()) == []
    key = cache.key(src.rel_path, result.source.sha256, policy.sha256)
    assert cache.problems == [f"cache entry {key[:12]}… not written (No space left on device)"]
    cache.set_contract_checked({"a" * 64})
    assert list(cache.folder.iterdir()) == [] and "contract-checked.json not written" in cache.problems[-1]
    monkeypatch.undo()
    (tmp_path / "m").mkdir()
    path, memo = _memo(tmp_path / "m")
    monkeypatch.setattr(atomic.os, "replace", full)
    assert (
        save_memo(path, memo) == "pair memo not saved (No space left on device): the next run recomputes it"
    )
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # the old memo, no temporary file


def test_a_manifest_without_outputs_or_not_json_is_no_previous_version_and_a_one_line_invalid(
    tmp_path, capsys
):
    from corpus_hygiene.cli import main
    from corpus_hygiene.publish.changes import changes_since_previous
    from corpus_hygiene.publish.dataset import publish
    from corpus_hygiene.publish.read import DatasetError, validate_dataset

    target = tmp_path / "clean"
    version = publish(target, "20261201T000000Z-aaaaaa", _tables(3), {})
    manifest = json.loads((version / "manifest.json").read_text("utf-8"))
    for damage, message in (
        (json.dumps({k: v for k, v in manifest.items() if k != "outputs"}), "is incomplete"),
        ("{not json", "cannot be read as JSON"),
    ):
        (version / "manifest.json").write_text(damage, "utf-8")
        assert changes_since_previous(target, [], []) is None  # was KeyError: 'outputs', every run failed
        with pytest.raises(DatasetError, match=message):
            validate_dataset(target)
        assert main(["validate", str(target)]) == 1  # was a traceback
        err = capsys.readouterr().err
        assert err.startswith("hygiene: invalid dataset: manifest.json in ") and message in err
        assert len(err.splitlines()) == 1
    publish(target, "20261202T000000Z-bbbbbb", _tables(2), {})  # a new version replaces it
    assert len(validate_dataset(target)[0]["outputs"]) == 4


def test_a_reader_during_a_publish_reads_one_version(tmp_path, monkeypatch):
    from corpus_hygiene.publish import read
    from corpus_hygiene.publish.dataset import publish
    from corpus_hygiene.publish.read import read_dataset, validate_dataset

    target = tmp_path / "clean"
    publish(target, "20261201T000000Z-aaaaaa", _tables(3, "Old"), {})
    real, switched = read.sha256_file, []

    def publish_meanwhile(path):  # another run publishes while the reader checks its first file
        if not switched:
            switched.append(path)
            publish(target, "20261202T000000Z-bbbbbb", _tables(5, "New"), {})
        return real(path)

    monkeypatch.setattr(read, "sha256_file", publish_meanwhile)
    manifest, failures = validate_dataset(target)  # was "modified after publishing"
    assert manifest["run_id"] == "20261201T000000Z-aaaaaa" and failures == [] and switched
    assert list(read_dataset(target)["text"]) == ["New 0", "New 1", "New 2", "New 3", "New 4"]


def test_a_crash_between_the_version_and_the_link_switch_never_costs_the_previous_version(tmp_path):
    from corpus_hygiene.publish.dataset import publish

    target, versions = tmp_path / "clean", tmp_path / ".clean.versions"
    publish(target, "20261201T000000Z-aaaaaa", _tables(3), {})

    def crash_at(step):
        def checkpoint(name):
            if name == step:
                raise SystemExit(f"killed at {step}")

        return checkpoint

    for step, run_id in (
        ("version complete", "20261202T000000Z-orphan"),
        ("link ready", "20261203T000000Z-link"),
    ):
        with pytest.raises(SystemExit):
            publish(target, run_id, _tables(4), {}, crash_at(step))
    assert verify_checksums(target)["run_id"] == "20261201T000000Z-aaaaaa"  # still the published one
    publish(target, "20261204T000000Z-bbbbbb", _tables(5), {})
    # kept: the new version and the one published before it (it was the orphan and the real one deleted)
    assert sorted(p.name for p in versions.iterdir()) == [
        "20261201T000000Z-aaaaaa",
        "20261204T000000Z-bbbbbb",
    ]
    assert not list(tmp_path.glob(".clean.link-*"))  # the stray link of the second crash is gone


def _published_once(tmp_path, env) -> tuple[Path, Path, str]:
    """A corpus of one file, its dataset published: (the corpus, the output folder, the run id)."""
    corpus, out = tmp_path / "in", tmp_path / "out"
    corpus.mkdir()
    (corpus / "iclr.txt").write_bytes(SAMPLE)
    assert run(corpus, out, env=env).returncode == 0
    return corpus, out, verify_checksums(out / "clean")["run_id"]


@pytest.mark.slow
def test_a_report_that_cannot_be_written_publishes_nothing_and_exit_1_keeps_the_previous_dataset(
    tmp_path, prefect_server
):
    corpus, out, before = _published_once(tmp_path, prefect_server)
    (out / "reports" / "index.html").unlink()
    (out / "reports" / "index.html").mkdir()  # the report's place cannot be written (as a full disk)
    (corpus / "icml.txt").write_bytes(SAMPLE.replace(b"ICLR 2026", b"ICML 2025"))
    failed = run(corpus, out, env=prefect_server)
    assert failed.returncode == 1  # was: exit 1 with the new dataset already published
    assert "hygiene: run failed: not published: the report cannot be written to" in failed.stderr
    assert verify_checksums(out / "clean")["run_id"] == before
    assert not [p.name for p in (out / "reports").iterdir() if ".tmp" in p.name]
    (out / "reports" / "index.html").rmdir()
    again = run(corpus, out, env=prefect_server)
    assert again.returncode == 0, again.stderr[-2000:]
    published = verify_checksums(out / "clean")["run_id"]
    assert published != before and (out / "reports" / f"{published}.html").is_file()


def _one_file(tmp_path, policy):
    from corpus_hygiene.ingest import discover

    corpus = tmp_path / "in"
    corpus.mkdir()
    (corpus / "iclr.txt").write_bytes(SAMPLE)
    (src,) = discover(corpus, policy.max_file_bytes).files
    return corpus / "iclr.txt", src


APPENDED = (
    b"\n\nA paragraph appended while the run was reading this file, which no manifest hash describes.\n"
)


def test_a_file_that_changes_after_discovery_is_quarantined_as_changed_and_not_cached(tmp_path, policy):
    from corpus_hygiene.incremental.file_cache import FileCache
    from corpus_hygiene.pipeline.assemble import assemble
    from corpus_hygiene.pipeline.process import process_file

    path, src = _one_file(tmp_path, policy)
    cache = FileCache(tmp_path / "cache")
    with path.open("ab") as fh:
        fh.write(APPENDED)
    result = process_file(src, policy, cache)
    assert result.records == [] and {r.reason for r in result.rejected} == {"changed_during_run"}
    assert len(result.rejected) == 8  # five abstracts, a placeholder, the appended paragraph, the file
    assert "its size went from" in result.rejected[0].detail and result.rejected[0].text_raw
    assert cache.entries() == []  # nothing of it is cached: the next run reads the file again
    asm = assemble([result], [])  # every row accounted for: the file's own row too
    assert asm.counts["ingested"] == asm.counts["quarantined"] == 8
    assert asm.quarantine[0]["source_line"] is None and asm.quarantine[0]["text_raw"] is None


def test_a_streamed_file_that_grows_between_its_hash_and_its_read_is_not_published_under_the_old_hash(
    tmp_path, policy, monkeypatch
):
    from dataclasses import replace

    from corpus_hygiene.incremental.file_cache import FileCache
    from corpus_hygiene.pipeline import process
    from corpus_hygiene.pipeline.process import process_file

    streamed = replace(policy, stream_above_bytes=100)  # this small file takes the streamed path
    path, src = _one_file(tmp_path, streamed)
    cache = FileCache(tmp_path / "cache")
    real = process.open_stream

    def grow_then_open(fd, *args):  # the file grows after it was hashed, before it is decoded
        with path.open("ab") as fh:
            fh.write(APPENDED)
        return real(fd, *args)

    monkeypatch.setattr(process, "open_stream", grow_then_open)
    result = process_file(src, streamed, cache)  # was: published with the appended paragraph, cached
    assert result.records == [] and {r.reason for r in result.rejected} == {"changed_during_run"}
    assert any("appended while the run" in (r.text_raw or "") for r in result.rejected)
    assert cache.entries() == []
    monkeypatch.undo()
    path.write_bytes(SAMPLE)  # truncated back: read again, all of it kept
    again = process_file(replace(src, mtime_ns=path.stat().st_mtime_ns), streamed, cache)
    assert len(again.records) == 5 and not again.source.cached and len(cache.entries()) == 1


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_a_paragraph_over_the_limit_is_quarantined_from_its_length_without_being_cleaned(
    tmp_path, policy, streamed, monkeypatch
):
    from dataclasses import replace

    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline import process

    small = replace(policy, max_paragraph_chars=20_000, stream_above_bytes=100 if streamed else 1 << 30)
    huge = "Tokens of an endless extraction error, " * 5_000  # 195,000 characters on one line
    abstracts = SAMPLE.decode("utf-8").split("\n\n")
    (tmp_path / "in").mkdir()
    text = "\n\n".join([abstracts[0], abstracts[1], huge, abstracts[2]]) + "\n"
    (tmp_path / "in" / "f.txt").write_text(text, "utf-8")
    (src,) = discover(tmp_path / "in", small.max_file_bytes).files
    cleaned = []
    real = process.clean_text
    spy = lambda t, lang, **kw: cleaned.append(len(t)) or real(t, lang, **kw)  # noqa: E731
    monkeypatch.setattr(process, "clean_text", spy)
    result = process.process_file(src, small)
    assert len(result.records) == 2 and max(cleaned) < 20_000  # the huge paragraph was never cleaned
    (row,) = [r for r in result.rejected if r.reason == "oversized_record"]
    assert row.source_line == 5 and row.text_raw == huge[:1000]
    assert row.detail.startswith(f"a paragraph of {len(huge):,} characters, over the policy's max_paragraph")


@pytest.fixture(scope="module")
def killed_runs(tmp_path_factory, prefect_server):
    """The corpus before and after a change, the dataset of the corpus before (with its cache and
    reports), and the tables a clean run makes of the corpus after."""
    tmp = tmp_path_factory.mktemp("killed")
    before, after = tmp / "before", tmp / "after"
    before.mkdir()
    (before / "iclr.txt").write_bytes(SAMPLE)
    shutil.copytree(before, after)
    (after / "icml.txt").write_bytes(SAMPLE.replace(b"ICLR 2026", b"ICML 2025").replace(b"We ", b"Here we "))
    assert hygiene(*_args(before, tmp / "published"), env=prefect_server).returncode == 0
    clean = hygiene(*_args(after, tmp / "clean"), "--no-cache", env=prefect_server)
    assert clean.returncode == 0, clean.stderr[-2000:]
    return prefect_server, after, tmp / "published", parquet_checksums(tmp / "clean" / "clean")


def _args(corpus: Path, out: Path) -> list[str]:
    return ["run", str(corpus), "--dataset-dir", str(out / "clean"), "--reports-dir", str(out / "reports")]


@pytest.mark.slow
@pytest.mark.parametrize("step", FAULT_STEPS)
def test_a_run_killed_at_any_write_leaves_a_valid_dataset_its_previous_version_and_a_clean_rerun(
    killed_runs, tmp_path, step
):
    from corpus_hygiene.publish.read import validate_dataset

    env, corpus, published, clean_tables = killed_runs
    out = tmp_path / "out"
    shutil.copytree(published, out, symlinks=True)  # the dataset, its versions, cache and reports
    previous = os.readlink(out / "clean")
    killed = subprocess.run([sys.executable, "-m", "tests.fault_run", step, *_args(corpus, out)], env=env,
                            capture_output=True, text=True, timeout=300, cwd=ROOT)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    manifest, failures = validate_dataset(out / "clean")
    assert failures == [] and (out / previous).is_dir()  # valid, and the version before still there
    again = hygiene(*_args(corpus, out), env=env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert parquet_checksums(out / "clean") == clean_tables  # the same bytes as a clean run of these inputs
    run_id = validate_dataset(out / "clean")[0]["run_id"]
    assert (out / "reports" / f"{run_id}.html").is_file()  # the published version has its report
    assert not [p for p in (out / "clean").parent.rglob("*") if ".tmp" in p.name or ".partial" in p.name]


# `hygiene` whose gates spill their keys to a folder that cannot be made, as on a full or unmounted disk
GATES_CANNOT_SPILL = """
import sys
import checks.gates as gates
from corpus_hygiene.cli import main

class Unwritable(gates.Spill):
    def __init__(self, dtype, folder=None, parts=gates.PARTS):
        super().__init__(dtype, "/nonexistent/scratch", parts)

gates.Spill = Unwritable
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_gates_that_cannot_spill_fail_the_run_discard_its_version_and_keep_the_previous_dataset(
    tmp_path, prefect_server
):
    corpus, out, before = _published_once(tmp_path, prefect_server)
    (corpus / "icml.txt").write_bytes(SAMPLE.replace(b"ICLR 2026", b"ICML 2025"))
    failed = subprocess.run(
        [sys.executable, "-c", GATES_CANNOT_SPILL, "run", str(corpus), "--dataset-dir", str(out / "clean"),
         "--reports-dir", str(out / "reports")],
        capture_output=True, text=True, timeout=600, env=prefect_server,
    )  # fmt: skip
    assert failed.returncode == 1
    assert "hygiene: run failed: cannot spill rows to /nonexistent/scratch" in failed.stderr
    assert verify_checksums(out / "clean")["run_id"] == before
    assert sorted(p.name for p in (out / ".clean.versions").iterdir()) == [before]  # the staged one is gone
    assert not list(out.glob(".clean.records-*"))  # nor its records
    again = run(corpus, out, env=prefect_server)
    assert again.returncode == 0, again.stderr[-2000:]
    assert verify_checksums(out / "clean")["run_id"] != before
