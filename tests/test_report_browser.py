"""The report in a real browser: Debian's chromium, driven headless by Playwright (no browser download).

Opens the page of a real run from disk, fails on any console error or page error (a CSP violation is
one), checks the key elements are visible and the quarantine filter works, and saves a screenshot.
"""

import os
import shutil
from pathlib import Path

import pytest

from corpus_hygiene.ingest import discover
from corpus_hygiene.pipeline.assemble import assemble
from corpus_hygiene.pipeline.process import process_file
from corpus_hygiene.publish.metrics import build_metrics
from corpus_hygiene.report import write_reports

from .conftest import EXAMPLES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Skipped on a developer machine without chromium; in CI (.ci/run installs it) a missing browser fails.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None and not os.environ.get("CI"),
        reason="Debian's chromium is not installed (.ci/run installs it)",
    ),
]
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def report(tmp_path_factory, policy=None):
    from corpus_hygiene.checks import load_policy

    policy = load_policy()
    out = tmp_path_factory.mktemp("browser")
    found = discover(EXAMPLES, policy.max_file_bytes)
    asm = assemble([process_file(f, policy) for f in found.files], found.refused, found.skipped, policy)
    metrics = build_metrics(
        run_id="20261202T000000Z-000000",
        input_dir=str(EXAMPLES),
        dataset_dir="data/clean",
        asm=asm,
        policy=policy,
        stage_seconds={"assemble": 1.0},
        outcome="published",
    )
    metrics["gates"] = [{"name": "not_empty", "passed": True, "detail": "20 records kept"}]
    return write_reports(out, metrics, asm.quarantine, asm.duplicates, asm.records), asm


def test_report_opens_without_errors_and_the_filter_works(report, tmp_path):
    from playwright.sync_api import sync_playwright

    assert CHROMIUM, "chromium is missing: install Debian's chromium package (apt-get install chromium)"
    page_path, asm = report
    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on(
            "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
        )
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on(
            "request",
            lambda r: problems.append(f"network: {r.url}") if not r.url.startswith("file:") else None,
        )
        page.goto(Path(page_path).as_uri())
        for selector in [
            "#summary",
            "#funnel-chart",
            "#language-chart",
            "#sources",
            "#repairs",
            "#signals",
            "#signal-stopword_share",
            "#contacts",
            "#duplicates",
            "#q-table",
            "#gates",
            "#checks",
            "#run",
        ]:
            assert page.locator(selector).first.is_visible(), selector
        rows = page.locator("#q-table tbody tr")
        assert page.locator("figure.signal").count() == 6
        assert page.locator("#signal-mean_word_length line.limit").count() == 2  # min and max drawn
        assert rows.count() == len(asm.quarantine) == 7
        page.select_option("#q-reason", "not_placeholder")
        assert page.locator("#q-table tbody tr:visible").count() == 2
        assert page.locator("#q-shown").inner_text() == "2"
        page.select_option("#q-reason", "")
        page.fill("#q-filter", "todo.txt")
        assert page.locator("#q-table tbody tr:visible").count() == 2
        page.fill("#q-filter", "")
        assert page.locator("#q-table tbody tr:visible").count() == 7
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    assert problems == []
    assert (tmp_path / "report.png").stat().st_size > 10_000
