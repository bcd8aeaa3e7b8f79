import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from checks.schemas import SCHEMA_VERSION
from corpus_hygiene.publish.dataset import PublishError, publish
from corpus_hygiene.publish.read import DatasetError, read_dataset, verify_checksums

from .conftest import signal_columns

STEPS = [
    "wrote records",
    "wrote duplicates",
    "wrote quarantine",
    "wrote manifest",
    "version complete",
    "link ready",
    "switched",
]


def _record(i: int, text: str = "An abstract") -> dict:
    text = f"{text} {i}"
    return {
        "record_id": f"{i:032x}",
        "source_file": "a.txt",
        "source_line": 3 + 2 * i,
        "venue": "ICLR",
        "year": 2026,
        "header_label": "Papers",
        "header_lang": "en",
        "text": text,
        "text_raw": text.replace(" ", "  "),
        "lang": "en",
        "lang_confidence": 0.99,
        "n_chars": len(text),
        **signal_columns(text),
        "fixes": ["whitespace"],
        "dup_count": 0,
        "also_in": [],
    }


def _tables(n: int, text: str = "An abstract") -> dict:
    quarantine = [
        {
            "source_file": "b.bin",
            "source_line": None,
            "reason": "binary_file",
            "detail": "binary",
            "text_raw": None,
        }
    ]
    return {
        "records": [_record(i, text) for i in range(n)],
        "duplicates": [],
        "quarantine": quarantine,
        "pairs": [],
    }


def test_publish_writes_the_contract_files_and_a_manifest_with_checksums(tmp_path):
    target = tmp_path / "data" / "clean"
    publish(target, "run-1", _tables(3), {"counts": {"kept": 3}})
    assert sorted(p.name for p in target.iterdir()) == [
        "duplicates.parquet",
        "manifest.json",
        "pairs.parquet",
        "quarantine.parquet",
        "records.parquet",
    ]
    manifest = verify_checksums(target)
    assert manifest["run_id"] == "run-1" and manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["outputs"]["records.parquet"]["rows"] == 3
    frame = read_dataset(target)
    assert list(frame["text"]) == ["An abstract 0", "An abstract 1", "An abstract 2"]
    assert list(frame["fixes"][0]) == ["whitespace"]


def test_the_package_level_reader_gives_pandas_or_arrow(tmp_path):
    import corpus_hygiene

    publish(tmp_path / "clean", "run-1", _tables(2), {})
    assert list(corpus_hygiene.read_dataset(tmp_path / "clean")["source_line"]) == [3, 5]
    table = corpus_hygiene.read_dataset(tmp_path / "clean", arrow=True)
    assert table.num_rows == 2 and table.schema.field("fixes").type.value_type.equals(pa.string())


def test_same_tables_give_byte_identical_parquet(tmp_path):
    publish(tmp_path / "one", "run-1", _tables(50), {})
    publish(tmp_path / "two", "run-2", _tables(50), {})
    for name in ("records", "duplicates", "quarantine"):
        assert (tmp_path / "one" / f"{name}.parquet").read_bytes() == (
            tmp_path / "two" / f"{name}.parquet"
        ).read_bytes()


def test_old_versions_are_pruned_and_the_previous_one_kept(tmp_path):
    target = tmp_path / "clean"
    for i in range(4):
        publish(target, f"2026120{i}T000000Z-aaaaaa", _tables(1), {})
    versions = sorted(p.name for p in (tmp_path / ".clean.versions").iterdir())
    assert versions == ["20261202T000000Z-aaaaaa", "20261203T000000Z-aaaaaa"]
    assert verify_checksums(target)["run_id"] == "20261203T000000Z-aaaaaa"


def test_tampered_parquet_and_wrong_schema_version_are_caught(tmp_path):
    target = tmp_path / "clean"
    version = publish(target, "run-1", _tables(3), {})
    table = pq.read_table(version / "records.parquet")
    pq.write_table(table.slice(0, 2), version / "records.parquet")
    with pytest.raises(DatasetError, match="does not match its checksum"):
        verify_checksums(target)
    version = publish(target, "run-2", _tables(3), {})
    manifest = json.loads((version / "manifest.json").read_text())
    manifest["schema_version"] = 99
    (version / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError, match="schema version 99"):
        verify_checksums(target)


def test_existing_folder_with_other_files_is_not_touched(tmp_path):
    target = tmp_path / "clean"
    target.mkdir()
    (target / "thesis.tex").write_text("precious")
    with pytest.raises(PublishError, match="holds files this tool did not write"):
        publish(target, "run-1", _tables(1), {})
    assert (target / "thesis.tex").read_text() == "precious"


def test_cleanup_and_retention_remove_only_what_this_tool_wrote(tmp_path):
    from corpus_hygiene.publish.beside import Beside

    target = tmp_path / "clean"
    publish(target, "run-1", _tables(1), {})
    versions = Beside(target).versions
    kept_by_user = publish(tmp_path / "other", "run-2", _tables(1), {})
    os.rename(kept_by_user, versions / "run-2")
    (versions / "run-2" / "notes.txt").write_text("mine")  # a version the user added a file to
    (versions / "user.partial").mkdir()  # a folder named like an unfinished version, not the tool's
    (versions / "user.partial" / "data.csv").write_text("1,2")
    for run in ("run-3", "run-4"):
        publish(target, run, _tables(1), {})
    names = sorted(p.name for p in versions.iterdir())
    assert names == ["run-2", "run-3", "run-4", "user.partial"]  # run-1 went: the tool's, superseded
    assert (versions / "run-2" / "notes.txt").read_text() == "mine"
    assert (versions / "user.partial" / "data.csv").read_text() == "1,2"


def test_existing_real_dataset_folder_is_adopted_then_replaced(tmp_path):
    first = publish(tmp_path / "staging", "run-0", _tables(1), {})
    target = tmp_path / "clean"
    os.rename(first, target)  # a dataset copied in as a plain folder
    publish(target, "run-1", _tables(2), {})
    assert target.is_symlink() and verify_checksums(target)["run_id"] == "run-1"


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from corpus_hygiene.publish.dataset import publish
    sys.path.insert(0, {root!r})
    from tests.test_dataset import _tables
    target, step, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    def checkpoint(name):
        if name == step:
            os.kill(os.getpid(), signal.SIGKILL)
    while True:
        publish(target, "run-new-" + str(os.getpid()), _tables(n, "New"), {{}}, checkpoint)
        if step != "loop":
            break
    """
)


def _run_killer(tmp_path, target, step, n=20, kill_after=None):
    script = tmp_path / "killer.py"
    script.write_text(KILLER.format(root=os.path.dirname(os.path.dirname(__file__))))
    proc = subprocess.Popen([sys.executable, str(script), str(target), step, str(n)])
    if kill_after is not None:
        time.sleep(kill_after)
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=120)
    return proc.returncode


@pytest.mark.parametrize("step", STEPS)
def test_kill_at_any_step_of_publish_leaves_old_or_new_complete_dataset(tmp_path, step):
    target = tmp_path / "clean"
    publish(target, "run-old", _tables(5, "Old"), {})
    assert _run_killer(tmp_path, target, step) == -signal.SIGKILL
    manifest = verify_checksums(target)  # complete and matching its checksums, whichever it is
    frame = read_dataset(target)
    if STEPS.index(step) < STEPS.index("switched"):
        assert manifest["run_id"] == "run-old" and frame["text"][0] == "Old 0"
    else:
        assert manifest["run_id"].startswith("run-new") and frame["text"][0] == "New 0"
    publish(target, "run-after", _tables(1), {})  # the next run cleans up and publishes
    assert verify_checksums(target)["run_id"] == "run-after"
    # what is left: the new version and the one published before it; no partial folder, no stray link
    kept = sorted(p.name for p in (tmp_path / ".clean.versions").iterdir())
    assert kept == sorted(["run-after", manifest["run_id"]]) and not list(tmp_path.glob(".clean.link-*"))


@pytest.mark.parametrize("delay", [0.9, 1.3, 1.7, 2.2])
def test_kill_at_a_random_moment_while_publishing_repeatedly(tmp_path, delay):
    target = tmp_path / "clean"
    publish(target, "run-old", _tables(5, "Old"), {})
    _run_killer(tmp_path, target, "loop", n=20_000, kill_after=delay)
    verify_checksums(target)
    assert len(read_dataset(target)) in (5, 20_000)


def test_a_staged_version_gives_the_bytes_of_publish_and_the_slices_the_gates_read(tmp_path, monkeypatch):
    from corpus_hygiene.publish import dataset
    from corpus_hygiene.publish.dataset import StagedVersion, sha256_file

    monkeypatch.setattr(dataset, "ROW_GROUP", 2)  # three row groups of records
    tables = _tables(5)
    whole = publish(tmp_path / "whole", "run-1", tables, {})
    staged = StagedVersion(tmp_path / "staged", "run-1")
    slices = list(staged.write_slices("records", tables["records"]))
    assert [len(s) for s in slices] == [2, 2, 1]
    assert pa.concat_tables(slices).to_pylist() == tables["records"]
    for name in ("duplicates", "quarantine", "pairs"):
        staged.write(name, tables[name])
    version = staged.commit({})
    for name in ("records", "duplicates", "quarantine", "pairs"):
        assert sha256_file(version / f"{name}.parquet") == sha256_file(whole / f"{name}.parquet")
    assert verify_checksums(tmp_path / "staged")["outputs"]["records.parquet"]["rows"] == 5


def test_a_discarded_or_incomplete_staged_version_is_never_published(tmp_path):
    from corpus_hygiene.publish.dataset import StagedVersion

    target = tmp_path / "clean"
    publish(target, "run-1", _tables(3), {})
    staged = StagedVersion(target, "run-2")
    staged.write("records", _tables(1)["records"])
    with pytest.raises(PublishError, match=r"tables not written: \['duplicates', 'quarantine', 'pairs'\]"):
        staged.commit({})
    staged.discard()
    assert not list((tmp_path / ".clean.versions").glob("*.partial"))
    with pytest.raises(PublishError, match="cannot be published"):
        staged.commit({})
    assert verify_checksums(target)["run_id"] == "run-1"


def test_validate_checks_the_manifests_counts_against_the_tables(tmp_path):
    """A manifest edited alone, or a table edited together with its checksum, no longer passes."""
    import pyarrow.parquet as pq

    from corpus_hygiene.publish.dataset import sha256_file
    from corpus_hygiene.publish.read import validate_dataset

    target = tmp_path / "clean"
    counts = {"ingested": 4, "kept": 3, "duplicates": 0, "quarantined": 1}
    tables = _tables(3)
    tables["quarantine"] = [
        {"source_file": "a.txt", "source_line": 9, "reason": "text_length", "detail": "short", "text_raw": ""}
    ]
    publish(target, "run-1", tables, {"counts": counts})
    assert validate_dataset(target)[1] == []
    version = target.resolve()
    manifest = json.loads((version / "manifest.json").read_text())

    edited = dict(manifest, counts=dict(counts, kept=30))
    (version / "manifest.json").write_text(json.dumps(edited))
    assert validate_dataset(target)[1] == ["manifest.counts.kept: says 30, records.parquet holds 3"]

    records = pq.read_table(version / "records.parquet").slice(0, 2)  # a row deleted, its checksum redone
    pq.write_table(records, version / "records.parquet")
    manifest["outputs"]["records.parquet"]["sha256"] = sha256_file(version / "records.parquet")
    (version / "manifest.json").write_text(json.dumps(manifest))
    assert validate_dataset(target)[1] == [
        "manifest.outputs.records.parquet.rows: says 3, the table holds 2",
        "manifest.counts.kept: says 3, records.parquet holds 2",
        "manifest.counts.ingested: says 4, the tables hold 3 rows",
    ]
