"""The run's figures: one dict that feeds the manifest, metrics.json and the HTML report."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from datetime import UTC, datetime

import pyarrow as pa

from corpus_hygiene.checks import Policy
from corpus_hygiene.pipeline.assemble import Assembled
from corpus_hygiene.pipeline.rows import column
from corpus_hygiene.report.charts import length_histogram
from corpus_hygiene.runinfo import code_fingerprint, library_versions


def source_rows(asm: Assembled) -> list[dict]:
    kept = Counter(column(asm.records, "source_file"))
    dups = Counter(r["source_file"] for r in asm.duplicates)
    quar = Counter(r["source_file"] for r in asm.quarantine)
    rows = []
    for s in asm.sources:
        h = s.header
        rows.append(
            {
                "source_file": s.source_file,
                "size": s.size,
                "sha256": s.sha256,
                "encoding": s.encoding,
                "confidence": s.confidence,
                "decode_repairs": list(s.decode_repairs),
                "header_line": h.line if h else None,
                "header": h.text if h else None,
                "venue": h.venue if h else None,
                "year": h.year if h else None,
                "label": h.label if h else None,
                "label_lang": h.label_lang if h else None,
                "lines": s.n_lines,
                "paragraphs": s.n_paragraphs,
                "kept": kept[s.source_file],
                "duplicates": dups[s.source_file],
                "quarantined": quar[s.source_file],
                "problem": s.problem,
                "problem_detail": s.problem_detail,
                "cached": s.cached,
            }
        )
    known = {s.source_file for s in asm.sources}
    for q in asm.quarantine:  # files refused before reading (symlinks, FIFOs, oversized)
        if q["source_line"] is None and q["source_file"] not in known:
            rows.append(
                {
                    "source_file": q["source_file"],
                    "problem": q["reason"],
                    "problem_detail": q["detail"],
                    "paragraphs": 0,
                    "kept": 0,
                    "duplicates": 0,
                    "quarantined": 1,
                }
            )
    return sorted(rows, key=lambda r: r["source_file"])


SAMPLES_PER_FIX = 3
SAMPLE_CHARS = 600


def repair_samples(asm: Assembled) -> dict[str, list[dict]]:
    """For each fix, the first few records it changed (in provenance order): text before and after."""
    out: dict[str, list[dict]] = {}
    for i, fixes in enumerate(column(asm.records, "fixes")):
        for fix in fixes:
            samples = out.setdefault(fix, [])
            if len(samples) < SAMPLES_PER_FIX:
                row = asm.records[i]
                samples.append(
                    {
                        "ref": f"{row['source_file']}:{row['source_line']}",
                        "before": row["text_raw"][:SAMPLE_CHARS],
                        "after": row["text"][:SAMPLE_CHARS],
                    }
                )
    return dict(sorted(out.items()))


def build_metrics(
    *,
    run_id: str,
    input_dir: str,
    dataset_dir: str,
    asm: Assembled,
    policy: Policy,
    stage_seconds: dict[str, float],
    outcome: str,
) -> dict:
    return {
        "run_id": run_id,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "input_dir": input_dir,
        "dataset_dir": dataset_dir,
        "outcome": outcome,
        "counts": asm.counts,
        "files_from_cache": sum(1 for s in asm.sources if s.cached),
        "sources": source_rows(asm),
        "skipped": asm.skipped,
        "languages": dict(Counter(column(asm.records, "lang")).most_common()),
        "header_languages": dict(Counter(column(asm.records, "header_lang")).most_common()),
        "fix_counts": asm.fix_counts,
        "length_histogram": length_histogram(column(asm.records, "n_chars")),
        "checks": asm.check_counts,
        "repair_samples": repair_samples(asm),
        "quarantine_reasons": asm.quarantine_reasons,
        "stage_seconds": {k: round(v, 3) for k, v in stage_seconds.items()},
        "arrow_memory_pool": pa.default_memory_pool().backend_name,  # settings.ARROW_DEFAULTS
        "code_version": code_fingerprint(),
        "policy_path": policy.path,
        "policy_sha256": policy.sha256,
        "dedup_config": {**asdict(policy.dedup_config()), "fingerprint": policy.dedup_config().fingerprint()},
        "libraries": library_versions(),
    }


def manifest_from_metrics(metrics: dict) -> dict:
    """The manifest keeps what a consumer needs to trust and trace the dataset."""
    return {
        "created_at": metrics["created_at"],
        "code_version": metrics["code_version"],
        "policy_sha256": metrics["policy_sha256"],
        "run_key": metrics.get(
            "run_key"
        ),  # corpus_hygiene.incremental.run_key: what these bytes were made from
        "dedup_config": metrics["dedup_config"],
        "counts": metrics["counts"],
        "libraries": metrics["libraries"],
        "input_files": [
            {k: s.get(k) for k in ("source_file", "size", "sha256", "encoding", "confidence", "problem")}
            for s in metrics["sources"]
        ],
    }
