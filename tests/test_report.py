from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_hygiene.report.html import FILTER_SCRIPT, SCRIPT_HASH, render_run_report

PAYLOADS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    '"><svg onload=alert(1)>',
    "javascript:alert(1)",
    "</td></tr></table><h1>x</h1>",
]


def _metrics():
    return {
        "run_id": "r1",
        "created_at": "2026-12-02T00:00:00+00:00",
        "input_dir": "in",
        "dataset_dir": "out",
        "outcome": "published",
        "counts": {"files": 1, "files_read": 1, "ingested": 5, "kept": 0, "duplicates": 0, "quarantined": 5},
        "sources": [],
        "skipped": [],
        "languages": {},
        "header_languages": {},
        "fix_counts": {"latex": 1},
        "repair_samples": [
            {
                "ref": "a.txt:3",
                "fixes": ["latex"],
                "before": PAYLOADS[0] + r"\textbf{x}",
                "after": PAYLOADS[0] + "x",
            }
        ],
        "quarantine_reasons": {"text_length": 5},
        "gates": [{"name": "not_empty", "passed": False, "detail": "0 records kept"}],
        "checks": {"not_placeholder": {"checked": 5, "failed": 5}},
        "length_histogram": [],
        "stage_seconds": {},
        "code_version": "v",
        "policy_path": "p",
        "policy_sha256": "0" * 64,
        "libraries": {},
    }


def test_corpus_text_is_escaped_everywhere():
    quarantine = [
        {"source_file": p, "source_line": 3, "reason": "text_length", "detail": p, "text_raw": p}
        for p in PAYLOADS
    ]
    html = render_run_report(_metrics(), quarantine, [])
    assert html.count("<script>") == 1 and f"<script>{FILTER_SCRIPT}</script>" in html  # ours only
    assert "<svg onload" not in html and "<img" not in html and "<h1>x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "onerror=&#34;alert(1)&#34;" in html
    assert 'http-equiv="Content-Security-Policy"' in html and "default-src 'none'" in html
    assert (
        f"script-src '{SCRIPT_HASH}'" in html and "unsafe-inline'; img" in html
    )  # no inline script but ours


def test_changes_since_the_previous_dataset(tmp_path):
    from corpus_hygiene.publish.changes import changes_since_previous
    from corpus_hygiene.publish.dataset import publish

    from .test_dataset import _tables

    target = tmp_path / "clean"
    assert changes_since_previous(target, [], []) is None
    old = _tables(3)
    publish(target, "run-1", old, {})
    new_records = old["records"][1:] + [
        dict(old["records"][0], record_id="f" * 32, source_line=99, lang="fr")
    ]
    changes = changes_since_previous(target, new_records, [{"reason": "not_placeholder"}])
    assert (changes["previous_run_id"], changes["added"], changes["removed"]) == ("run-1", 1, 1)
    assert changes["added_sample"] == ["a.txt:99"] and changes["removed_sample"] == ["a.txt:3"]
    assert changes["languages"] == {
        "en": {"before": 3, "now": 2, "change": -1},
        "fr": {"before": 0, "now": 1, "change": 1},
    }
    assert changes["quarantine"]["binary_file"]["change"] == -1


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.sampled_from("abcde"), min_size=1, max_size=8),
    st.lists(st.sampled_from("abcdef"), max_size=8),
)
def test_changes_match_records_by_id_as_sets_do(tmp_path_factory, before, now):
    """Added and removed ids, each named by its last row, and the distinct ids on each side, as Python
    sets and dicts give them (repeated ids included), whatever the order of the rows."""
    from corpus_hygiene.publish.changes import changes_since_previous
    from corpus_hygiene.publish.dataset import publish

    from .test_dataset import _tables

    target = tmp_path_factory.mktemp("changes") / "clean"
    old = _tables(len(before))
    for i, row in enumerate(old["records"]):
        row.update(record_id=before[i] * 32, source_line=i)
    publish(target, "run-1", old, {})
    rows = [dict(old["records"][0], record_id=v * 32, source_line=100 + i) for i, v in enumerate(now)]
    changes = changes_since_previous(target, rows, [])

    def named(records, absent):  # the last row of an id names it
        return {
            r["record_id"]: f"a.txt:{r['source_line']}" for r in records if r["record_id"][0] not in absent
        }

    added, removed = named(rows, before), named(old["records"], now)
    assert (changes["records_before"], changes["records_now"]) == (len(set(before)), len(set(now)))
    assert (changes["added"], changes["removed"]) == (len(added), len(removed))
    assert changes["added_sample"] == sorted(added.values())
    assert changes["removed_sample"] == sorted(removed.values())


def test_changes_say_whether_the_policy_or_the_code_changed_since_the_previous_dataset():
    import re

    def said(**previous) -> str:
        changes = {"previous_run_id": "r0", "records_before": 1, "records_now": 1, "added": 0, "removed": 0,
                   "languages": {}, "quarantine": {}} | previous  # fmt: skip
        metrics = _metrics() | {"changes": changes, "policy_sha256": "a" * 64, "code_version": "0.1.0"}
        html = render_run_report(metrics, [], [])
        return re.sub("<[^>]+>", "", re.search(r'<p id="what-changed">(.*?)</p>', html).group(1))

    same = {"previous_policy_sha256": "a" * 64, "previous_code_version": "0.1.0"}
    assert said(**same) == "Same policy and code as then: every change comes from the input."
    policy = said(**same | {"previous_policy_sha256": "b" * 64})
    assert policy.startswith(f"Since then the policy changed (sha256 {'b' * 16} → {'a' * 16}):")
    both = said(previous_policy_sha256="b" * 64, previous_code_version="0.0.9")
    assert "the policy changed" in both and "and the code changed (0.0.9 → 0.1.0)" in both


def test_foreign_or_old_files_in_the_reports_folder_are_skipped_with_one_warning(tmp_path, caplog):
    import json

    from corpus_hygiene.report.html import write_reports

    (tmp_path / "20260101T000000Z-old.metrics.json").write_text(json.dumps({"run_id": "x", "kept": 3}))
    (tmp_path / "notes.metrics.json").write_text("[1, 2]")
    (tmp_path / "broken.metrics.json").write_bytes(b"\xff{")
    m = _metrics()
    page = write_reports(tmp_path, m, [], [])
    index = (tmp_path / "index.html").read_text("utf-8")
    assert page.is_file() and m["run_id"] in index and "20260101T000000Z-old" not in index
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"][-1:]
    assert warning.startswith("the reports index skips files this tool cannot read: ")
    assert all(name in warning for name in ("notes.metrics.json", "broken.metrics.json", "-old.metrics.json"))
    assert 'href="20260101T000000Z-old.html"' not in page.read_text("utf-8")  # no "previous" link to it


def test_index_lists_runs_newest_first_with_a_trend(tmp_path):
    import json

    from corpus_hygiene.report.html import _render_index

    for i, kept in enumerate([5, 7, 6]):
        m = _metrics()
        m["run_id"] = f"2026120{i}T000000Z-aaaaaa"
        m["created_at"] = f"2026-12-0{i + 1}T03:00:00+00:00"
        m["counts"] = dict(m["counts"], kept=kept)
        m["policy_sha256"] = ("a" if i < 2 else "b") * 64  # the third run's policy differs
        (tmp_path / f"{m['run_id']}.metrics.json").write_text(json.dumps(m))
    html = _render_index(tmp_path)
    assert html.index("20261202T000000Z") < html.index("20261201T000000Z") < html.index("20261200T000000Z")
    assert 'id="trend"' in html and "run (oldest → newest, 3 runs)" in html and ">records</text>" in html
    assert html.count("policy changed") == 2  # the marker's label and its tooltip, once
    assert "20261202T000000Z-aaaaaa: policy changed" in html
    assert "2026-12-01T03:00" in html and "2026-12-03T03:00" in html  # the time axis's ends
    assert "<code>bbbbbbbbbb</code>" in html and '<code class="path" title="in">in</code>' in html


def test_a_copy_differing_in_case_shows_no_word_changed_and_excerpts_are_windows():
    from corpus_hygiene.report.html import diff_words, windowed

    d = diff_words("Large language models grade essays.", "LARGE LANGUAGE MODELS GRADE ESSAYS.")
    assert [changed for changed, _ in d["after"]] == [False] and d["after"][0][1].startswith("LARGE")
    long = " ".join(f"word{i}" for i in range(200))
    d = diff_words(long, long.replace("word100", "term100"))
    shown = windowed(d["after"])
    assert [c for c, _ in shown] == [False, True, False] and shown[1][1] == "term100"
    assert (
        shown[0][1].startswith("… word")
        and shown[2][1].endswith(" …")
        and len("".join(p for _, p in shown)) < 200
    )
