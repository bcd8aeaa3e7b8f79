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
    from checks import load_policy

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
        page.click("#q-details > summary")  # long sections start closed, with their counts in the summary
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
            "#dedup-audit",
            "#what-if",
            "#q-table",
            "#gates",
            "#checks",
            "#run",
        ]:
            assert page.locator(selector).first.is_visible(), selector
        rows = page.locator("#q-table tbody tr")
        assert page.locator(".signals figure.signal").count() == 6
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


@pytest.fixture(scope="module")
def stress_report(tmp_path_factory):
    from checks import load_policy

    from .report_corpus import build

    policy = load_policy()
    root = tmp_path_factory.mktemp("stress")
    build(root / "in")
    found = discover(root / "in", policy.max_file_bytes)
    asm = assemble([process_file(f, policy) for f in found.files], found.refused, found.skipped, policy)
    metrics = build_metrics(
        run_id="20261205T000000Z-000000",
        input_dir=str(root / "in"),
        dataset_dir="data/clean",
        asm=asm,
        policy=policy,
        stage_seconds={"assemble": 1.0},
        outcome="published",
    )
    return write_reports(root / "reports", metrics, asm.quarantine, asm.duplicates, asm.records), asm


SECTIONS = ["#summary", "#sources", "#languages", "#repairs", "#signals", "#duplicates", "#dedup-audit",
            "#similarity-histogram", "#what-if", "#dup-files", "#quarantine", "#validation", "#changes",
            "#run"]  # fmt: skip


@pytest.mark.parametrize("width", [1400, 390])
def test_the_report_of_a_hard_corpus_fits_the_screen_at_every_width(stress_report, width, tmp_path):
    """Deep paths, long names and URLs, CJK and RTL text: the page never scrolls sideways, closed or
    with every section open, and its length stays bounded; the filter works; screenshots are kept."""
    from playwright.sync_api import sync_playwright

    page_path, asm = stress_report
    assert len(asm.records) + len(asm.duplicates) + len(asm.quarantine) == 2000
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(Path(page_path).as_uri())
        for selector in SECTIONS:
            assert page.locator(selector).count() == 1, selector
        size = "[document.documentElement.scrollWidth, innerWidth, document.documentElement.scrollHeight]"
        scroll_width, inner, height = page.evaluate(size)
        assert scroll_width <= inner and height < 12_000, (scroll_width, inner, height)
        page.screenshot(path=str(tmp_path / f"closed-{width}.png"), full_page=True)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        scroll_width, inner, _ = page.evaluate(size)
        assert scroll_width <= inner, (scroll_width, inner)
        assert page.evaluate(SMALLEST_CHART_TEXT) >= 10  # charts scroll in their box, never shrink
        page.select_option("#q-reason", "not_placeholder")
        shown = page.locator("#q-table tbody tr:visible").count()
        assert shown == sum(1 for q in asm.quarantine if q["reason"] == "not_placeholder") > 0
        page.screenshot(path=str(tmp_path / f"open-{width}.png"))
        browser.close()
    assert errors == []


# The smallest text of any chart as drawn on the screen, in CSS px (font size × the SVG's scale, rotated
# labels included).
SMALLEST_CHART_TEXT = """Math.min(...[...document.querySelectorAll('svg text')].map(t => {
    const m = t.getScreenCTM(); return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); }))"""


@pytest.mark.parametrize("width", [1400, 390])
def test_the_index_fits_its_box_and_its_chart_labels_are_whole_and_readable(stress_report, width, tmp_path):
    import json

    from playwright.sync_api import sync_playwright

    page_path, _ = stress_report
    reports = Path(page_path).parent
    metrics = json.loads(next(reports.glob("*.metrics.json")).read_text("utf-8"))
    for i in range(1, 8):  # more runs; the last ones under another policy and code
        at = {"run_id": f"2026120{i}T000000Z-00000{i}", "created_at": f"2026-12-0{i}T03:00:00+00:00"}
        later = metrics | at
        if i > 5:
            later.update(policy_sha256="f" * 64, code_version="0.2.0+0123456789abcdef")
        write_reports(reports, later, [], [])
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto((reports / "index.html").as_uri())
        box = page.evaluate("(e => [e.scrollWidth, e.clientWidth])(document.querySelector('div.wide'))")
        page_width = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        assert page_width[0] <= page_width[1], page_width  # the page never scrolls sideways
        if width >= 1400:
            assert box[0] <= box[1], box  # every column in the 1,200 px box
        assert page.evaluate(SMALLEST_CHART_TEXT) >= 10
        cut = page.evaluate("""[...document.querySelectorAll('#trend text')].filter(t => {
            const r = t.getBoundingClientRect(), svg = t.ownerSVGElement.getBoundingClientRect();
            return r.left < svg.left || r.right > svg.right; }).map(t => t.textContent)""")
        assert cut == [], cut
        assert page.locator("#trend text.change").first.text_content() == "policy and code changed"
        page.screenshot(path=str(tmp_path / f"index-{width}.png"), full_page=True)
        browser.close()
