"""Report rendering at scale: a run of 100k records (synthetic rows, every section filled).

Sections show at most report.html.MAX_ROWS rows each ("N of M") and point to the Parquet files, so the
page stays small; this measures render time and page size.

    .venv/bin/python -m benchmarks.bench_report [--records 100000]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import peak_rss_mb, save
from corpus_hygiene.report import write_reports
from corpus_hygiene.report.charts import length_histogram


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    rng = random.Random(2)
    n = args.records
    text = "We study how annotation noise propagates through a pipeline of detectors. " * 8
    quarantine = [
        {
            "source_file": f"f{i % 1000:04d}.txt",
            "source_line": i,
            "reason": rng.choice(["not_placeholder", "text_length", "no_header"]),
            "detail": "a sentence",
            "text_raw": text,
        }
        for i in range(n // 10)
    ]
    duplicates = [
        {
            "source_file": f"f{i % 1000:04d}.txt",
            "source_line": i,
            "canonical_ref": "a.txt:3",
            "canonical_id": "0" * 32,
            "kind": "near",
            "similarity": 0.9,
            "reason": "longer",
            "text_raw": text,
        }
        for i in range(n // 5)
    ]
    metrics = {
        "run_id": "20261202T000000Z-bench0",
        "created_at": "2026-12-02T00:00:00+00:00",
        "input_dir": "in",
        "dataset_dir": "out",
        "outcome": "published",
        "counts": {
            "files": 1000,
            "files_read": 1000,
            "ingested": n,
            "kept": n - n // 10 - n // 5,
            "duplicates": n // 5,
            "quarantined": n // 10,
        },
        "sources": [
            {
                "source_file": f"f{i:04d}.txt",
                "encoding": "utf_8",
                "confidence": 1.0,
                "decode_repairs": [],
                "venue": "ICLR",
                "year": 2026,
                "label": "Papers",
                "label_lang": "en",
                "paragraphs": n // 1000,
                "kept": 1,
                "duplicates": 1,
                "quarantined": 1,
                "problem": None,
            }
            for i in range(1000)
        ],
        "skipped": [],
        "languages": {"en": n // 2, "zh": n // 4, "ja": n // 8, "fr": n // 8},
        "header_languages": {"en": n},
        "fix_counts": {"latex": n // 4, "mojibake": n // 10},
        "repair_samples": {
            "latex": [{"ref": "a.txt:3", "before": text + r"\textbf{x}", "after": text + "x"}] * 3
        },
        "length_histogram": length_histogram([rng.randint(200, 2000) for _ in range(n)]),
        "quarantine_reasons": {"not_placeholder": n // 30, "text_length": n // 30, "no_header": n // 30},
        "checks": {"not_placeholder": {"checked": n, "failed": n // 30}},
        "gates": [{"name": "not_empty", "passed": True, "detail": "ok"}],
        "changes": None,
        "stage_seconds": {"assemble": 1.0},
        "code_version": "bench",
        "policy_path": "p",
        "policy_sha256": "0" * 64,
        "dedup_config": {"fingerprint": "x"},
        "libraries": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        page = write_reports(Path(tmp), metrics, quarantine, duplicates)
        secs = time.perf_counter() - start
        size = page.stat().st_size
    save(
        "report",
        {
            "records": n,
            "render_seconds": round(secs, 2),
            "page_mb": round(size / 1e6, 2),
            "peak_rss_mb": peak_rss_mb(),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
