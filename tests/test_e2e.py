"""End-to-end: the real `hygiene` command runs the real Prefect flow; the tests open the outputs."""

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from corpus_hygiene.checks import DEFAULT_POLICY_PATH as DEFAULT_POLICY
from corpus_hygiene.ingest.split import is_blank, iter_paragraphs, split_lines
from corpus_hygiene.publish.dataset import verify_checksums

from .conftest import EXAMPLES, SEEDS, needs_seeds, parquet_checksums

pytestmark = pytest.mark.slow
ZH = "图神经网络在分子性质预测任务中表现突出，但其预测结果往往缺乏可解释性。"
ZH_ABSTRACT = ZH + "本文提出一种基于子结构注意力的解释方法，并在四个基准数据集上验证了其有效性。"
HYGIENE = str(Path(sys.executable).with_name("hygiene"))


def _command(input_dir, out_dir, *extra):
    return [HYGIENE, "run", str(input_dir), "--dataset-dir", str(out_dir / "clean"),
            "--reports-dir", str(out_dir / "reports"), *extra]  # fmt: skip


def run_hygiene(input_dir, out_dir, *extra):
    return subprocess.run(_command(input_dir, out_dir, *extra), capture_output=True, text=True, timeout=600)


def run_hygiene_async(input_dir, out_dir, *extra):
    """The same run, started and left running (communicate() or wait() on it)."""
    return subprocess.Popen(
        _command(input_dir, out_dir, *extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def tables(dataset_dir):
    return {
        name: pq.read_table(Path(dataset_dir) / f"{name}.parquet").to_pylist()
        for name in ("records", "duplicates", "quarantine")
    }


def assert_clean_console(proc):
    both = proc.stdout + proc.stderr
    assert "Traceback" not in both, both[-3000:]
    assert "telemetry" not in both.lower()
    assert "CancelledError" not in both
    assert "Error logging to API" not in both  # logs sent before the run's temporary server stops
    assert both.count("Starting temporary server") <= 1  # Dask workers share the flow's server


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("example")
    proc = run_hygiene(EXAMPLES, out)
    return out, proc


def test_example_corpus_run_succeeds_and_says_where_outputs_are(example_run):
    out, proc = example_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_clean_console(proc)
    assert "32 records from 10 files: 20 kept, 5 duplicates, 7 quarantined" in proc.stdout
    assert (
        "  quarantine: no_header 2, not_placeholder 2, binary_file 1, empty_text 1, stopword_share 1\n"
        in proc.stdout
    )
    assert "  languages:  en 10, zh 3, fr 2, ja 2, ru 2, ko 1\n" in proc.stdout
    assert "process_files: 10/10 files, 31 paragraphs" in proc.stderr + proc.stdout
    assert f"dataset: {out / 'clean'}" in proc.stdout
    report = Path(proc.stdout.split("report:")[1].split()[0])
    assert report.is_file() and report.parent == out / "reports"


def test_unchanged_rerun_does_nothing_and_says_so(example_run):
    out, first = example_run
    before = verify_checksums(out / "clean")
    proc = run_hygiene(EXAMPLES, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith(f"unchanged: {out / 'clean'} (")
    assert "Starting temporary server" not in proc.stdout + proc.stderr  # decided before Prefect starts
    after = verify_checksums(out / "clean")
    assert after["run_id"] == before["run_id"] and after["run_key"] == before["run_key"]


def test_rerun_with_a_new_and_a_removed_file_reuses_the_rest(tmp_path):
    corpus = tmp_path / "in"
    shutil.copytree(EXAMPLES, corpus)
    assert run_hygiene(corpus, tmp_path).returncode == 0
    before = verify_checksums(tmp_path / "clean")
    cache = tmp_path / ".clean.cache"
    entries = {p.name.removesuffix(".json.zst") for p in cache.glob("*.json.zst")}
    # the published run's entries, whose rows the next run's gates need not validate again
    assert set(json.loads((cache / "contract-checked.json").read_text())) == entries and len(entries) == 10
    (corpus / "zz_new.txt").write_text(f"ICLR 2026 Papers\n\n{ZH_ABSTRACT}\n", "utf-8")
    (corpus / "iclr_2026_papers.txt").unlink()
    proc = run_hygiene(corpus, tmp_path, "--workers", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    # one small new file: not worth starting a Dask cluster for; processed in the flow's process
    assert "Dask cluster" not in proc.stderr + proc.stdout
    assert "process_files: 1/1 files, 1 paragraphs" in proc.stdout + proc.stderr
    after = verify_checksums(tmp_path / "clean")
    assert after["run_key"] != before["run_key"]
    metrics = json.loads((tmp_path / "reports" / f"{after['run_id']}.metrics.json").read_text())
    assert metrics["files_from_cache"] == 9  # every file but the new one
    page = (tmp_path / "reports" / f"{after['run_id']}.html").read_text("utf-8")
    assert f'id="previous-run" href="{before["run_id"]}.html"' in page
    if sys.platform == "linux":  # settings.ARROW_DEFAULTS, set by the CLI before Arrow's first allocation
        assert metrics["arrow_memory_pool"] == "jemalloc"
    assert "zz_new.txt:3" in metrics["changes"]["added_sample"]
    assert metrics["changes"]["removed"] >= 1
    rows = [row for table in tables(tmp_path / "clean").values() for row in table]
    assert not any(row["source_file"] == "iclr_2026_papers.txt" for row in rows)
    assert "iclr_2026_papers.txt" not in {f["source_file"] for f in after["input_files"]}
    checked = set(json.loads((cache / "contract-checked.json").read_text()))
    assert checked == {p.name.removesuffix(".json.zst") for p in cache.glob("*.json.zst")} != entries
    # the same bytes as a run that reads no cache and validates every row
    full = run_hygiene(corpus, tmp_path / "full", "--no-cache")
    assert full.returncode == 0, full.stderr[-3000:]
    assert {
        k: v
        for k, v in verify_checksums(tmp_path / "full" / "clean")["outputs"].items()
        if k.endswith(".parquet")
    } == {k: v for k, v in after["outputs"].items() if k.endswith(".parquet")}


@pytest.fixture(scope="module")
def dask_scheduler():
    """A running Dask scheduler with two worker processes, as a user's cluster would be."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def test_a_rerun_on_a_dask_scheduler_reads_the_cache_and_processes_new_and_damaged_files(
    tmp_path, dask_scheduler
):
    corpus = tmp_path / "in"
    shutil.copytree(EXAMPLES, corpus)
    assert run_hygiene(corpus, tmp_path).returncode == 0
    (corpus / "zz_new.txt").write_text(f"ICLR 2026 Papers\n\n{ZH_ABSTRACT}\n", "utf-8")
    damaged = sorted((tmp_path / ".clean.cache").glob("*.json.zst"))[0]
    damaged.write_bytes(b"not an entry")  # read as a miss: processed again
    proc = run_hygiene(corpus, tmp_path, "--dask-address", dask_scheduler)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_clean_console(proc)
    assert f"Connecting to an existing Dask cluster at {dask_scheduler}" in proc.stdout + proc.stderr
    assert "process_files: 2/2 files" in proc.stdout + proc.stderr  # the new one and the damaged one
    after = verify_checksums(tmp_path / "clean")
    metrics = json.loads((tmp_path / "reports" / f"{after['run_id']}.metrics.json").read_text())
    assert metrics["files_from_cache"] == 9  # 10 entries, one damaged; and the new file
    assert "zz_new.txt:3" in metrics["changes"]["added_sample"]
    full = run_hygiene(corpus, tmp_path / "full", "--no-cache")
    assert full.returncode == 0, full.stderr[-3000:]
    whole = verify_checksums(tmp_path / "full" / "clean")["outputs"]
    for name in ("records.parquet", "duplicates.parquet", "quarantine.parquet"):
        assert after["outputs"][name]["sha256"] == whole[name]["sha256"], name


def test_two_local_dask_workers_give_byte_identical_data(tmp_path):
    from corpus_hygiene.flows.on_dask import CLUSTER_MIN_BYTES

    corpus = tmp_path / "in"
    copies = CLUSTER_MIN_BYTES // sum(f.stat().st_size for f in EXAMPLES.rglob("*") if f.is_file()) + 1
    for i in range(copies):  # enough new input for a cluster to start
        shutil.copytree(EXAMPLES, corpus / f"copy{i:03d}")
    policy = tmp_path / "policy.toml"  # the copies are duplicates of each other: allow that
    policy.write_text(
        DEFAULT_POLICY.read_text("utf-8").replace("max_duplicate_share = 0.6", "max_duplicate_share = 1.0")
    )
    proc = run_hygiene(corpus, tmp_path / "two", "--workers", "2", "--policy", str(policy))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_clean_console(proc)
    both = proc.stdout + proc.stderr
    assert "Creating a new Dask cluster with `distributed.deploy.local.LocalCluster`" in both
    assert f"process_files: {10 * copies}/{10 * copies} files" in both
    assert "dashboard" not in both.lower()  # there is none (no bokeh): no dead link
    assert "Task run 'process copy" not in both  # the batches are plain Dask tasks, not Prefect tasks
    one = run_hygiene(corpus, tmp_path / "one", "--no-cache", "--policy", str(policy))
    assert one.returncode == 0, one.stderr[-3000:]
    assert parquet_checksums(tmp_path / "one" / "clean") == parquet_checksums(tmp_path / "two" / "clean")


def test_example_corpus_tables_hold_every_record_exactly_once(example_run):
    out, _ = example_run
    manifest = verify_checksums(out / "clean")
    t = tables(out / "clean")
    assert manifest["counts"] == {
        "files": 10,
        "files_read": 8,
        "ingested": 32,
        "kept": 20,
        "duplicates": 5,
        "quarantined": 7,
    }
    refs = [(r["source_file"], r["source_line"]) for name in t for r in t[name]]
    assert len(refs) == len(set(refs)) == 32
    assert len({r["record_id"] for r in t["records"]}) == 20


def test_example_dataset_validates_and_carries_its_card_and_schema(example_run, tmp_path):
    out, _ = example_run
    ok = subprocess.run(
        [HYGIENE, "validate", str(out / "clean")], capture_output=True, text=True, timeout=120
    )
    assert ok.returncode == 0, ok.stderr
    assert "20 records; checksums match the manifest; every contract check passes" in ok.stdout
    card = (out / "clean" / "README.md").read_text("utf-8")
    assert "| 32 | 20 | 5 | 7 | 10 |" in card and "`not_placeholder` | 2 |" in card
    assert "quality limits (min_words 10," in card and "min_stopword_share 0.05" in card
    pairs = pq.read_table(out / "clean" / "pairs.parquet").to_pylist()  # the two near duplicates' pairs
    assert sorted((p["source_file"], p["source_line"], p["candidate_ref"], p["merged"]) for p in pairs) == [
        ("iclr_2026_papers.txt", 13, "aaai_2025_accepted.md:7", True),
        ("zh/iclr_2026_论文列表.txt", 10, "zh/iclr_2026_论文列表.txt:5", True),
    ]
    assert "`pairs.parquet`" in card
    schema = json.loads((out / "clean" / "schema.json").read_text("utf-8"))
    assert list(schema["tables"]) == ["records", "duplicates", "quarantine", "pairs"]
    assert [c["name"] for c in schema["tables"]["duplicates"]][:3] == [
        "source_file",
        "source_line",
        "canonical_id",
    ]
    # a copy with one record changed no longer matches its manifest
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(out / "clean", copy)
    table = pq.read_table(copy / "records.parquet")
    pq.write_table(table.slice(1), copy / "records.parquet")
    bad = subprocess.run([HYGIENE, "validate", str(copy)], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "does not match its checksum in the manifest" in bad.stderr


def test_example_corpus_encodings_headers_and_languages(example_run):
    out, _ = example_run
    sources = {s["source_file"]: s for s in verify_checksums(out / "clean")["input_files"]}
    assert {k: v["encoding"] for k, v in sources.items()} == {
        "aaai_2025_accepted.md": "utf_8",
        "acl_2025.txt": "utf_8",
        "fr/taln_2025.txt": "cp1252",
        "iclr_2026_papers.txt": "utf_8",
        "ja/neurips_2025.txt": "utf_16",
        "ko/acl_2024.txt": "utf_8_sig",
        "notes/todo.txt": "utf_8",
        "ru/emnlp_2025.txt": "utf_8",
        "scans/proceedings_scan.pdf": None,
        "zh/iclr_2026_论文列表.txt": "gb18030",
    }
    records = tables(out / "clean")["records"]
    by_file = {}
    for r in records:
        by_file.setdefault(r["source_file"], set()).add((r["venue"], r["year"], r["header_lang"]))
    assert by_file == {
        "aaai_2025_accepted.md": {("AAAI", 2025, "en")},
        "acl_2025.txt": {("ACL", 2025, "en")},
        "fr/taln_2025.txt": {("TALN", 2025, "fr")},
        "iclr_2026_papers.txt": {("ICLR", 2026, "en")},
        "ja/neurips_2025.txt": {("NeurIPS", 2025, "ja")},
        "ko/acl_2024.txt": {("ACL", 2024, "ko")},
        "ru/emnlp_2025.txt": {("EMNLP", 2025, "ru")},
        "zh/iclr_2026_论文列表.txt": {("ICLR", 2026, "zh")},
    }
    langs = {(r["source_file"], r["source_line"]): r["lang"] for r in records}
    assert langs[("ko/acl_2024.txt", 3)] == "ko" and langs[("ko/acl_2024.txt", 6)] == "en"
    assert langs[("ja/neurips_2025.txt", 3)] == "ja" and langs[("fr/taln_2025.txt", 3)] == "fr"
    french = next(r["text"] for r in records if r["source_file"] == "fr/taln_2025.txt")
    assert "d’alignement" in french and "« propres »" in french  # cp1252 0x92 and 0xAB/0xBB as authored


def test_example_corpus_repairs_are_recorded(example_run):
    out, _ = example_run
    records = {(r["source_file"], r["source_line"]): r for r in tables(out / "clean")["records"]}
    pdf = records[("aaai_2025_accepted.md", 11)]
    assert pdf["fixes"] == ["ligatures", "soft_hyphens", "dehyphenation", "letter_spacing"]
    assert "We introduce a corpus" in pdf["text"] and "accuracy" in pdf["text"] and "LaTeX." in pdf["text"]
    assert "lightweight" in pdf["text"] and "fine-tuning" in pdf["text"]
    tide = records[("iclr_2026_papers.txt", 3)]
    assert tide["fixes"] == ["latex"]
    assert "We present TideNet," in tide["text"] and "by 18% relative" in tide["text"]
    assert tide["text"].endswith("at https://example.org/tidenet.")
    cache = records[("acl_2025.txt", 3)]  # text macros keep their argument; literal dollars stay
    assert "We present PromptCache, a prefix-aware cache" in cache["text"] and "Merkle hash" in cache["text"]
    assert "costs $3 and $4 per million tokens" in cache["text"] and "saves $2 of every $10" in cache["text"]
    assert (
        cache["fixes"] == ["latex"] and cache["lost_words"] == [] and cache["pii"] == {"email": 0, "phone": 0}
    )
    contact = records[("acl_2025.txt", 5)]  # kept and flagged by the default policy
    assert contact["pii"] == {"email": 1, "phone": 1} and "voice-corpus@example.org" in contact["text"]
    assert 0.2 < contact["stopword_share"] < 0.6 and contact["n_words"] > 50
    zh = records[("zh/iclr_2026_论文列表.txt", 7)]
    assert "修改记录" in zh["text"] and zh["fixes"] == [
        "whitespace"
    ]  # a hard wrap in Chinese joins without a space


def test_example_corpus_duplicates_and_quarantine(example_run):
    out, _ = example_run
    t = tables(out / "clean")
    dups = {(d["source_file"], d["source_line"]): d for d in t["duplicates"]}
    assert set(dups) == {
        ("aaai_2025_accepted.md", 5),
        ("ru/emnlp_2025.txt", 7),
        ("iclr_2026_papers.txt", 9),
        ("iclr_2026_papers.txt", 13),
        ("zh/iclr_2026_论文列表.txt", 10),
    }
    assert dups[("aaai_2025_accepted.md", 5)]["canonical_ref"] == "iclr_2026_papers.txt:5"
    assert dups[("ru/emnlp_2025.txt", 7)]["canonical_ref"] == "zh/iclr_2026_论文列表.txt:3"
    # mojibake copy vs clean original: the copy that needed no repair is kept
    assert dups[("iclr_2026_papers.txt", 9)]["canonical_ref"] == "aaai_2025_accepted.md:13"
    # near duplicates: a resubmission with an appended sentence (English), reworded characters (Chinese)
    en = dups[("iclr_2026_papers.txt", 13)]
    assert (en["kind"], en["canonical_ref"]) == ("near", "aaai_2025_accepted.md:7")
    assert 0.8 < en["similarity"] < 1.0 and en["reason"] == "more complete (522 vs 494 characters)"
    zh = dups[("zh/iclr_2026_论文列表.txt", 10)]
    assert (zh["kind"], zh["canonical_ref"]) == ("near", "zh/iclr_2026_论文列表.txt:5")
    assert 0.8 < zh["similarity"] < 1.0
    canon = {r["record_id"]: r for r in t["records"]}
    for d in dups.values():
        assert (d["kind"] == "exact") == (d["similarity"] == 1.0)
        assert f"{d['source_file']}:{d['source_line']}" in canon[d["canonical_id"]]["also_in"]
        assert canon[d["canonical_id"]]["dup_count"] == len(canon[d["canonical_id"]]["also_in"])
    quarantine = sorted((q["source_file"], q["source_line"], q["reason"]) for q in t["quarantine"])
    assert quarantine == [
        ("aaai_2025_accepted.md", 9, "not_placeholder"),
        ("aaai_2025_accepted.md", 15, "empty_text"),
        ("acl_2025.txt", 7, "stopword_share"),
        ("iclr_2026_papers.txt", 11, "not_placeholder"),
        ("notes/todo.txt", 1, "no_header"),
        ("notes/todo.txt", 3, "no_header"),
        ("scans/proceedings_scan.pdf", None, "binary_file"),
    ]


def test_example_report_shows_the_run(example_run):
    out, proc = example_run
    report = Path(proc.stdout.split("report:")[1].split()[0]).read_text("utf-8")
    assert "Content-Security-Policy" in report
    assert "32 = 20 + 5 + 7" in report
    assert "zh/iclr_2026_论文列表.txt" in report and "gb18030" in report
    assert "binary_file" in report and "no_header" in report
    assert 'id="repair-samples"' in report and "<del>\\textbf{</del>" in report
    assert "more complete (522 vs 494 characters)" in report and 'id="dup-table"' in report
    assert "<del>ﬁ</del>" in report and "<ins>fi</ins>" in report
    # the PDF record repaired by four fixes appears once, with all of them
    assert report.count("ligatures, soft_hyphens, dehyphenation, letter_spacing") == 1
    # quality signals drawn with the policy's limits; contact details counted, never shown
    assert 'id="signal-stopword_share"' in report and "min 0.05" in report and "stopword_share" in report
    assert "1 e-mail addresses in 1 records" in report and "1 phone numbers in 1 records" in report
    assert "voice-corpus@example.org" not in report.split('id="contacts"')[1].split("</p>")[0]
    assert 'id="no-lost-words"' in report
    assert 'id="similarity-histogram"' in report and 'id="what-if"' in report and "threshold 0.7" in report
    index = (out / "reports" / "index.html").read_text("utf-8")
    assert report.split("<code>")[1].split("</code>")[0] in index  # the run id
    metrics = json.loads(next((out / "reports").glob("*.metrics.json")).read_text())
    assert metrics["counts"]["kept"] == 20
    # the per-file figures of the report are the Parquet files' own
    t = tables(out / "clean")
    for source in metrics["sources"]:
        for table, column in (
            ("records", "kept"),
            ("duplicates", "duplicates"),
            ("quarantine", "quarantined"),
        ):
            assert source[column] == sum(1 for r in t[table] if r["source_file"] == source["source_file"])
    from collections import Counter

    assert metrics["quarantine_reasons"] == dict(Counter(q["reason"] for q in t["quarantine"]))
    assert metrics["languages"] == dict(Counter(r["lang"] for r in t["records"]))
    assert "10 of 10 files shown" in report


@needs_seeds
def test_seed_files(tmp_path):
    proc = run_hygiene(SEEDS, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_clean_console(proc)
    t = tables(tmp_path / "clean")
    assert len(t["records"]) == 76 and t["quarantine"] == [] and t["duplicates"] == []
    exgrpo = [
        r for r in t["records"] if r["source_file"].startswith("002_") and "GRPO (EXGRPO) uses" in r["text"]
    ]
    assert len(exgrpo) == 1 and exgrpo[0]["lost_words"] == []  # \texttt{EXGRPO} keeps its argument
    assert {(r["venue"], r["year"]) for r in t["records"]} == {("ICLR", 2026)}
    header_langs = {r["source_file"]: r["header_lang"] for r in t["records"]}
    zh_file = next(p.name for p in SEEDS.iterdir() if "论文列表" in p.read_text("utf-8").splitlines()[0])
    assert {k for k, v in header_langs.items() if v == "zh"} == {zh_file}
    assert set(header_langs.values()) == {"zh", "en"}


def _hostile_folder(root: Path) -> set:
    """Write a folder of everything that goes wrong; return the (file, line) refs that must appear."""
    rng = random.Random(7)
    expected = set()
    abstract = (
        "We measure how annotation noise propagates through a three-stage pipeline of detectors "
        "and taggers, and show that a small audit set removes most of it."
    )
    files = {
        "random.bin": bytes(rng.randrange(256) for _ in range(5000)),
        "empty.txt": b"",
        "blank.txt": b"\n\n   \n",
        "latin/cp1252.txt": f"CVPR 2024 Papers\r\n\r\n\u201c{abstract}\u201d\r\n\r\nTBA\r\n".encode("cp1252"),
        "utf16.txt": f"ICML 2023 Papers\n\n{abstract}\n".encode("utf-16"),
        "gb.txt": f"ACL 2022 论文列表\n\n{abstract}\n\n{ZH}\n".encode("gb18030"),
        "noheader.txt": f"{abstract}\n\nsecond paragraph that is long enough to be something real\n".encode(),
        "truncated.txt": f"EMNLP 2021 Papers\n\n{abstract} 论".encode()[:-1],
        "weird_lines.txt": (
            f"NAACL 2020 Papers\r\rfirst\u2028still first {abstract}\x0c\n\n{abstract} b\r\n"
        ).encode(),
    }
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    os.symlink(root / "nowhere", root / "broken_link.txt")
    os.symlink("/etc/hostname", root / "outside_link.txt")
    os.symlink(root / "loop2", root / "loop1")
    os.symlink(root / "loop1", root / "loop2")
    os.mkfifo(root / "fifo.txt")
    for rel in [
        "random.bin",
        "empty.txt",
        "blank.txt",
        "broken_link.txt",
        "outside_link.txt",
        "loop1",
        "loop2",
        "fifo.txt",
    ]:
        expected.add((rel, None))
    for rel in [
        "latin/cp1252.txt",
        "utf16.txt",
        "gb.txt",
        "noheader.txt",
        "truncated.txt",
        "weird_lines.txt",
    ]:
        lines = split_lines(
            files[rel].decode("utf-16")
            if rel == "utf16.txt"
            else files[rel].decode("gb18030" if rel == "gb.txt" else "cp1252", errors="replace")
        )
        first = next(i for i, line in enumerate(lines) if not is_blank(line))
        start = first if rel == "noheader.txt" else first + 1
        expected.update((rel, p.line) for p in iter_paragraphs(lines, start))
    return expected


def test_hostile_folder_completes_and_loses_nothing(tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    expected = _hostile_folder(root)
    # Most of this folder is junk: with the default gates (at most 50% quarantined) nothing would be
    # published, so this run raises that limit; the next run checks the gate itself.
    relaxed = tmp_path / "policy.toml"
    relaxed.write_text(
        DEFAULT_POLICY.read_text("utf-8").replace("max_quarantine_share = 0.5", "max_quarantine_share = 1.0")
    )
    proc = run_hygiene(root, tmp_path, "--policy", str(relaxed))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_clean_console(proc)
    t = tables(tmp_path / "clean")
    refs = [(r["source_file"], r["source_line"]) for name in t for r in t[name]]
    assert sorted(refs, key=str) == sorted(expected, key=str)
    assert len(refs) == len(set(refs))
    reasons = {q["source_file"]: q["reason"] for q in t["quarantine"] if q["source_line"] is None}
    assert reasons == {
        "random.bin": "binary_file",
        "empty.txt": "empty_file",
        "blank.txt": "empty_file",
        "broken_link.txt": "broken_symlink",
        "outside_link.txt": "symlink_outside_root",
        "loop1": "symlink_loop",
        "loop2": "symlink_loop",
        "fifo.txt": "not_regular_file",
    }
    weird = sorted(line for file, line in refs if file == "weird_lines.txt")
    assert weird == [3, 5]  # CR-only breaks count; U+2028 and form feed do not

    # With a stricter quarantine-share gate the run fails: exit 1 with one line naming the gate,
    # nothing published, the previous dataset left in place, and the report says why.
    before = verify_checksums(tmp_path / "clean")["run_id"]
    strict = tmp_path / "strict.toml"
    strict.write_text(
        DEFAULT_POLICY.read_text("utf-8").replace("max_quarantine_share = 0.5", "max_quarantine_share = 0.2")
    )
    failed = run_hygiene(root, tmp_path, "--policy", str(strict))
    assert failed.returncode == 1
    (line,) = [x for x in failed.stderr.splitlines() if x.startswith("hygiene:")]
    assert line.startswith("hygiene: run failed: gate failed, nothing published: quarantine_share: ")
    assert "quarantined; the policy allows 20%" in line
    assert verify_checksums(tmp_path / "clean")["run_id"] == before
    assert not list((tmp_path / ".clean.versions").glob("*.partial"))  # the version the gates staged
    (report_line,) = [x for x in failed.stderr.splitlines() if x.startswith("report:")]
    newest = max((tmp_path / "reports").glob("*.metrics.json"), key=lambda p: p.stat().st_mtime)
    assert Path(report_line.split()[1]) == newest.with_name(newest.name.replace(".metrics.json", ".html"))
    failed_metrics = json.loads(newest.read_text())
    assert failed_metrics["outcome"].startswith("gate failed, nothing published")
    # same input as the published dataset: nothing added or removed since it
    assert (failed_metrics["changes"]["added"], failed_metrics["changes"]["removed"]) == (0, 0)
    assert failed_metrics["changes"]["previous_run_id"] == before


def test_missing_input_folder_fails_fast_with_one_line(tmp_path):
    proc = subprocess.run(
        [HYGIENE, "run", str(tmp_path / "missing")], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == f"hygiene: error: input folder {str(tmp_path / 'missing')!r} does not exist or is not a folder"
    )


def test_a_first_run_that_fails_its_gates_leaves_nothing_beside_the_dataset(tmp_path):
    strict = tmp_path / "strict.toml"
    strict.write_text(
        DEFAULT_POLICY.read_text("utf-8").replace("max_quarantine_share = 0.5", "max_quarantine_share = 0.1")
    )
    proc = run_hygiene(EXAMPLES, tmp_path / "out", "--policy", str(strict))
    assert proc.returncode == 1 and "gate failed, nothing published: quarantine_share" in proc.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["reports"]  # the report says why
