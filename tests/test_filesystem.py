"""Survives its filesystem (issue 34): odd names, files that change mid-run, damaged caches and
manifests, outputs inside the input folder, failed report writes, readers during a publish, crashes
between steps, oversized paragraphs. Each test reproduces one cause; the runs are real `hygiene run`s."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from .conftest import EXAMPLES

pytestmark = pytest.mark.slow
HYGIENE = str(Path(sys.executable).with_name("hygiene"))
SAMPLE = (EXAMPLES / "iclr_2026_papers.txt").read_bytes()  # a header and six abstracts


def hygiene(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([HYGIENE, *args], capture_output=True, text=True, timeout=600, env=env)


def run(corpus: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return hygiene("run", str(corpus), "--dataset-dir", str(out / "clean"), "--reports-dir",
                   str(out / "reports"), *extra)  # fmt: skip


def table(dataset: Path, name: str = "records") -> list[dict]:
    return pq.read_table(dataset / f"{name}.parquet").to_pylist()


def test_a_file_name_with_bytes_that_are_not_utf8_is_read_and_published_escaped(tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    (corpus / os.fsdecode(b"iclr caf\xe9 2026.txt")).write_bytes(SAMPLE)  # Latin-1 é: not UTF-8
    (corpus / "ok.txt").write_bytes(SAMPLE.replace(b"ICLR 2026", b"ICML 2025"))
    first = run(corpus, tmp_path / "out")
    assert first.returncode == 0, first.stderr[-3000:]
    names = {r["source_file"] for r in table(tmp_path / "out" / "clean", "duplicates")}
    names |= {r["source_file"] for r in table(tmp_path / "out" / "clean")}
    assert names == {"iclr caf\\xe9 2026.txt", "ok.txt"}
    manifest = json.loads((tmp_path / "out" / "clean" / "manifest.json").read_text("utf-8"))
    assert [f["source_file"] for f in manifest["input_files"]] == ["iclr caf\\xe9 2026.txt", "ok.txt"]
    again = run(corpus, tmp_path / "out", "--no-cache")  # the cache's own path (first run wrote it)
    assert again.returncode == 0, again.stderr[-3000:]


def test_the_dataset_reports_and_cache_under_the_input_folder_are_not_input(tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    (corpus / "iclr.txt").write_bytes(SAMPLE)
    quarantined = []
    for _ in range(3):  # the third run used to fail its quarantine gate on its own outputs
        proc = hygiene("run", str(corpus), "--dataset-dir", str(corpus / "clean"), "--reports-dir",
                       str(corpus / "reports"), "--no-cache")  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        quarantined.append(table(corpus / "clean", "quarantine"))
    manifest = json.loads((corpus / "clean" / "manifest.json").read_text("utf-8"))
    assert [f["source_file"] for f in manifest["input_files"]] == ["iclr.txt"]
    assert quarantined[0] == quarantined[2] and {r["source_file"] for r in quarantined[2]} == {"iclr.txt"}
