"""HTML quality reports: one self-contained page per run, plus an index of runs."""

from corpus_hygiene.report.html import render_run_report, write_reports

__all__ = ["render_run_report", "write_reports"]
