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

from checks import DEFAULT_POLICY_PATH as DEFAULT_POLICY
from corpus_hygiene.ingest.split import is_blank, iter_paragraphs, split_lines
from corpus_hygiene.publish.read import verify_checksums

from .conftest import EXAMPLES, SEEDS, needs_seeds

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
    assert "Starting temporary server" not in both  # the run's own server, shared by its Dask workers


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("example")
    dead = out / ".clean.records-20261201T000000Z-dead00"  # what a killed run leaves: its staged records
    dead.mkdir()
    (dead / "000000.arrow").write_bytes(b"x")
    (dead / ".corpus-hygiene-partial").touch()  # the mark every run's staging folder carries
    mine = out / ".clean.records-mine"  # a user's folder of a name alike: not the tool's to remove
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
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
    # the run's staged records are gone, and so is the dead run's; the user's folder stays
    assert sorted(p.name for p in out.iterdir()) == [
        ".clean.cache",
        ".clean.lock",
        ".clean.records-mine",
        ".clean.versions",
        "clean",
        "reports",
    ]
    assert (out / ".clean.records-mine" / "notes.txt").read_text() == "mine"


def test_a_run_against_its_published_dataset_and_benchmark_items_keeps_only_what_is_new(
    example_run, tmp_path
):
    from .test_reference import ABSTRACTS

    out, _ = example_run
    bench = EXAMPLES.parent / "reference" / "benchmark_items.parquet"
    question = pq.read_table(bench).to_pylist()[16]  # question-15
    corpus = tmp_path / "in"
    shutil.copytree(EXAMPLES, corpus)
    (corpus / "new.txt").write_text(
        "NeurIPS 2026 Papers\n\n"
        + "\n\n".join([ABSTRACTS[0], ABSTRACTS[1], f"{ABSTRACTS[3]} {question['text']}"])
    )
    refs = ["--reference", str(out / "clean"), "--reference", str(bench)]
    proc = run_hygiene(corpus, tmp_path, *refs)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "35 records from 11 files: 2 kept, 25 duplicates, 8 quarantined" in proc.stdout
    published, now = tables(out / "clean"), tables(tmp_path / "clean")
    assert [r["source_file"] for r in now["records"]] == ["new.txt", "new.txt"]
    assert {d["kind"] for d in now["duplicates"]} == {"reference"}  # every old record, kept or duplicate
    assert {d["canonical_id"] for d in now["duplicates"]} == {r["record_id"] for r in published["records"]}
    (dirty,) = [q for q in now["quarantine"] if q["reason"] == "contaminated"]
    assert (dirty["source_file"], dirty["source_line"]) == ("new.txt", 7) and "question-15" in dirty["detail"]
    manifest = json.loads((tmp_path / "clean" / "manifest.json").read_text())
    assert [r["name"] for r in manifest["references"]] == [str(out / "clean"), str(bench)]
    check = subprocess.run([HYGIENE, "validate", str(tmp_path / "clean")], capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout.count(": its rows resolve") == 2, (
        check.stdout + check.stderr
    )
    page = Path(proc.stdout.split("report:")[1].split()[0]).read_text()
    # the bench reference's row: 28 rows, all short texts; no copy, one record contaminated
    row = "".join(f'<td class="num">{n}</td>' for n in (28, 28, 0, 0, 1))
    assert 'id="references"' in page and row in page and "question-15" in page
    again = run_hygiene(corpus, tmp_path, *refs)
    assert again.returncode == 0 and "unchanged:" in again.stdout


def test_unchanged_rerun_does_nothing_and_says_so(example_run):
    out, first = example_run
    before = verify_checksums(out / "clean")
    proc = run_hygiene(EXAMPLES, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith(f"unchanged: {out / 'clean'} (")
    assert "Flow run" not in proc.stdout + proc.stderr  # decided before Prefect starts
    after = verify_checksums(out / "clean")
    assert after["run_id"] == before["run_id"] and after["run_key"] == before["run_key"]


def test_rerun_with_a_new_and_a_removed_file_reuses_the_rest(tmp_path):
    corpus = tmp_path / "in"
    shutil.copytree(EXAMPLES, corpus)
    assert run_hygiene(corpus, tmp_path).returncode == 0
    before = verify_checksums(tmp_path / "clean")
    cache = tmp_path / ".clean.cache"
    entries = {p.name.removesuffix(".entry") for p in cache.glob("*.entry")}
    # the published run's entries, whose rows the next run's gates need not validate again
    assert set(json.loads((cache / "contract-checked.json").read_text())) == entries and len(entries) == 10
    (corpus / "zz_new.txt").write_text(f"ICLR 2026 Papers\n\n{ZH_ABSTRACT}\n", "utf-8")
    (corpus / "iclr_2026_papers.txt").unlink()
    proc = run_hygiene(corpus, tmp_path, "--workers", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    # one small new file: not worth starting a Dask cluster for; processed in the flow's process
    assert "Dask cluster" not in proc.stderr + proc.stdout
    said = "--workers 2: 0.0 MB of new input, ~0 s of work in one process, ~7 s on 2 workers"
    assert said in proc.stderr + proc.stdout
    assert "processed in this process (a cluster would not pay)" in proc.stderr + proc.stdout
    assert "process_files: 1/1 files, 1 paragraphs" in proc.stdout + proc.stderr
    after = verify_checksums(tmp_path / "clean")
    assert after["run_key"] != before["run_key"]
    metrics = json.loads((tmp_path / "reports" / f"{after['run_id']}.metrics.json").read_text())
    assert metrics["files_from_cache"] == 9  # every file but the new one
    page = (tmp_path / "reports" / f"{after['run_id']}.html").read_text("utf-8")
    assert f'id="previous-run" href="{before["run_id"]}.html"' in page
    assert "zz_new.txt:3" in metrics["changes"]["added_sample"]
    assert metrics["changes"]["removed"] >= 1
    rows = [row for table in tables(tmp_path / "clean").values() for row in table]
    assert not any(row["source_file"] == "iclr_2026_papers.txt" for row in rows)
    assert "iclr_2026_papers.txt" not in {f["source_file"] for f in after["input_files"]}
    checked = set(json.loads((cache / "contract-checked.json").read_text()))
    assert checked == {p.name.removesuffix(".entry") for p in cache.glob("*.entry")} != entries
    # the same bytes as a run that reads no cache and validates every row
    full = run_hygiene(corpus, tmp_path / "full", "--no-cache")
    assert full.returncode == 0, full.stderr[-3000:]
    assert {
        k: v
        for k, v in verify_checksums(tmp_path / "full" / "clean")["outputs"].items()
        if k.endswith(".parquet")
    } == {k: v for k, v in after["outputs"].items() if k.endswith(".parquet")}


def test_a_rerun_on_a_dask_scheduler_reads_the_cache_and_processes_new_and_damaged_files(
    tmp_path, dask_scheduler
):
    corpus = tmp_path / "in"
    shutil.copytree(EXAMPLES, corpus)
    assert run_hygiene(corpus, tmp_path).returncode == 0
    (corpus / "zz_new.txt").write_text(f"ICLR 2026 Papers\n\n{ZH_ABSTRACT}\n", "utf-8")
    damaged = sorted((tmp_path / ".clean.cache").glob("*.entry"))[0]
    damaged.write_bytes(b"not an entry")  # read as a miss: processed again
    proc = run_hygiene(corpus, tmp_path, "--dask-address", dask_scheduler)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_clean_console(proc)
    assert f"Connecting to an existing Dask cluster at {dask_scheduler}" in proc.stdout + proc.stderr
    assert "process_files: 2/2 files" in proc.stdout + proc.stderr  # the new one and the damaged one
    # the memo of the first run leaves only the new text's pairs to search: in the flow, not a shuffle
    assert "near-duplicate search on Dask: " not in proc.stdout + proc.stderr
    after = verify_checksums(tmp_path / "clean")
    metrics = json.loads((tmp_path / "reports" / f"{after['run_id']}.metrics.json").read_text())
    assert metrics["files_from_cache"] == 9  # 10 entries, one damaged; and the new file
    assert "zz_new.txt:3" in metrics["changes"]["added_sample"]
    # the same input, without cache or memo, searched by a shuffle on the cluster: the same bytes
    full = run_hygiene(corpus, tmp_path / "full", "--no-cache", "--dask-address", dask_scheduler)
    assert full.returncode == 0, full.stderr[-3000:]
    assert "near-duplicate search on Dask: " in full.stdout + full.stderr
    whole = verify_checksums(tmp_path / "full" / "clean")["outputs"]
    for name in ("records.parquet", "duplicates.parquet", "quarantine.parquet", "pairs.parquet"):
        assert after["outputs"][name]["sha256"] == whole[name]["sha256"], name


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


HOSTILE_LATEX = [
    r"We compute \sqrt[3]{n} in running text for every sample of the corpus and report the results.",
    r"Our code is at \href{http://x.org/a%20b}{\textbf{our} code}, with every experiment of the paper.",
    "{" * 5000 + "deeply nested braces around a sentence about graph models" + "}" * 5000,
    "$" * 20000,
    r"\def\x{\x} We define a macro that recurses forever \x and use it in this abstract about graphs.",
    r"\newcommand{\y}[1]{\y{#1}} A recursive command \y{a} appears in this abstract about language models.",
    r"Unclosed groups {\textbf{bold {text and \emph{more words in this abstract about learning systems",
    "\\textbf{" * 3000 + "nested macros three thousand deep in a paragraph about retrieval",
    r"\begin{equation} E = mc^2 \end{equation} shows that energy and mass are equivalent in this model.",
]


def test_hostile_latex_publishes_and_accounts_for_every_paragraph(tmp_path):
    """The crashers of LaTeX converters (deep braces, thousands of dollars, recursive definitions,
    unclosed groups) cannot fail a run: it publishes, and every paragraph is in exactly one table."""
    root = tmp_path / "in"
    root.mkdir()
    normal = [f"{ABSTRACT_STEM} Variant {i} studies {w} on held-out data." for i, w in enumerate(WORDS)]
    (root / "hostile.txt").write_text("ICLR 2026 Papers\n\n" + "\n\n".join(HOSTILE_LATEX + normal) + "\n")
    proc = run_hygiene(root, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    t = tables(tmp_path / "clean")
    rows = [r for name in t for r in t[name]]
    assert len(rows) == len(HOSTILE_LATEX) + len(normal)
    assert not [r for r in t["quarantine"] if r["reason"] == "processing_error"]
    texts = {r["source_line"]: r["text"] for r in t["records"]}
    assert "we compute ∛n in running text" in texts[3].lower()
    assert "our code (http://x.org/a%20b)" in texts[5]


ABSTRACT_STEM = "We study how a small verifier improves retrieval augmented generation across benchmarks."
WORDS = ("graphs", "trees", "tables", "images", "speech", "code", "proofs", "maps", "music", "video", "law")
