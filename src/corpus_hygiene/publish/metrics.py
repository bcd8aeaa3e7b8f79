"""The run's figures: one dict that feeds the manifest, metrics.json and the HTML report."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from datetime import UTC, datetime

import numpy as np
import pyarrow as pa

from checks import Policy
from corpus_hygiene.language.scripts import CHARACTER_WORD_LANGUAGES
from corpus_hygiene.pipeline.assemble import Assembled
from corpus_hygiene.report.charts import length_histogram, signal_histogram
from corpus_hygiene.runinfo import code_fingerprint, library_versions
from corpus_hygiene.store.rows import columns, provenance_numbers


def _count(rows, name: str) -> Counter:
    """How many rows hold each value of column ``name`` (read a slice at a time)."""
    return Counter(value for _, (values,) in columns(rows, name) for value in values)


def _numbers(rows, name: str, skip_langs=()) -> np.ndarray:
    """Column ``name``'s numbers as one array (8 bytes a row, not a Python object), without None and
    without the rows of a language in ``skip_langs``."""
    parts = []
    for _, (values, *langs) in columns(rows, name, *(["lang"] if skip_langs else [])):
        langs = langs[0] if langs else [None] * len(values)
        part = [v for v, lang in zip(values, langs, strict=True) if v is not None and lang not in skip_langs]
        if part:  # an empty slice would make an int column float
            parts.append(np.array(part))
    return np.concatenate(parts) if parts else np.zeros(0)


QUARANTINE_FILE_COLUMNS = ("source_file", "source_line", "reason", "detail")


def source_rows(asm: Assembled) -> list[dict]:
    kept, dups, quar = _count(asm.records, "source_file"), _count(asm.duplicates, "source_file"), Counter()
    unread = []  # (file, reason, detail) of the quarantine rows of no line: files refused before reading
    for _, (files, lines, reasons, details) in columns(asm.quarantine, *QUARANTINE_FILE_COLUMNS):
        quar.update(files)
        rows = zip(files, lines, reasons, details, strict=True)
        unread += [(f, reason, detail) for f, line, reason, detail in rows if line is None]
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
    # files refused before reading (symlinks, FIFOs, oversized)
    for file, reason, detail in unread:
        if file not in known:
            rows.append(
                {
                    "source_file": file,
                    "problem": reason,
                    "problem_detail": detail,
                    "paragraphs": 0,
                    "kept": 0,
                    "duplicates": 0,
                    "quarantined": 1,
                }
            )
    return sorted(rows, key=lambda r: r["source_file"])


SAMPLES_PER_FIX = 3
SAMPLE_CHARS = 3000  # the page shows a window around each change; this bounds metrics.json


def repair_samples(asm: Assembled) -> list[dict]:
    """The first records (in provenance order) each fix changed, up to SAMPLES_PER_FIX a fix; a record
    repaired by several fixes appears once, with all of them."""
    shown: Counter = Counter()
    out = []
    rows = ((lo + k, fixes) for lo, (part,) in columns(asm.records, "fixes") for k, fixes in enumerate(part))
    for i, fixes in rows:
        if not any(shown[f] < SAMPLES_PER_FIX for f in fixes):
            continue
        shown.update(fixes)
        row = asm.records[i]
        out.append(
            {
                "ref": f"{row['source_file']}:{row['source_line']}",
                "fixes": list(fixes),
                "before": row["text_raw"][:SAMPLE_CHARS],
                "after": row["text"][:SAMPLE_CHARS],
            }
        )
    return out


# signal column → (its record check, the policy limits drawn on its histogram)
SIGNALS = {
    "n_words": ("word_count", ("min_words",)),
    "mean_word_length": ("mean_word_length", ("min_mean_word_length", "max_mean_word_length")),
    "alpha_share": ("alpha_share", ("min_alpha_share",)),
    "stopword_share": ("stopword_share", ("min_stopword_share",)),
    "repeated_ngram_share": ("repeated_ngrams", ("max_repeated_ngram_share",)),
    "n_urls": ("url_count", ("max_urls",)),
}
MAX_LOST_ROWS = 200


def signal_charts(asm: Assembled, policy: Policy) -> dict[str, dict]:
    """Each quality signal's histogram over the kept records, its limits, and how many records its check
    quarantined (their values lie beyond a limit; quarantine rows keep the text, not the signals)."""
    out = {}
    for name, (check, limit_keys) in SIGNALS.items():
        # mean word length is not checked where words are characters (checks/domain.py)
        values = _numbers(asm.records, name, CHARACTER_WORD_LANGUAGES if name == "mean_word_length" else ())
        limits = {key.split("_")[0]: policy.quality[key] for key in limit_keys}
        out[name] = {
            "check": check,
            "quarantined": asm.quarantine_reasons.get(check, 0),
            **signal_histogram(values, limits),
        }
    return out


def lost_word_rows(asm: Assembled) -> list[dict]:
    """Kept records from which cleaning removed words that were not markup (within max_lost_words)."""
    rows = []
    for _, (files, lines, lost) in columns(asm.records, "source_file", "source_line", "lost_words"):
        rows += [
            {"ref": f"{f}:{line}", "words": list(words)}
            for f, line, words in zip(files, lines, lost, strict=True)
            if words
        ]
        if len(rows) >= MAX_LOST_ROWS:
            break
    return rows[:MAX_LOST_ROWS]


def contact_counts(asm: Assembled, policy: Policy) -> dict:
    """How many records hold e-mail addresses and phone numbers (never the values), and the action."""
    counts = Counter()
    for _, (pii,) in columns(asm.records, "pii"):
        for kind in ("email", "phone"):
            found = [p[kind] for p in pii if p[kind]]
            counts[f"records_with_{kind}"] += len(found)
            counts[f"{kind}s"] += sum(found)
    return {
        "action": policy.contacts,
        **{key: counts[key] for key in ("records_with_email", "emails", "records_with_phone", "phones")},
        "quarantined": asm.quarantine_reasons.get("contact_details", 0),
    }


BORDERLINE = 20  # pairs shown on each side of the threshold
WHAT_IF = (0.6, 0.65, 0.7, 0.75, 0.8)
AUDIT_TEXT_CHARS = 1500


def _pair_columns(pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs' similarity, merged and record (a number for each (source_file, source_line)) as arrays."""
    files: dict[str, int] = {}
    parts = [(np.zeros(0), np.zeros(0, bool), np.zeros(0, np.int64))]
    names = ("similarity", "merged", "source_file", "source_line")
    for _, (similarity, merged, sources, lines) in columns(pairs, *names):
        record = provenance_numbers(sources, lines, files)
        parts.append((np.array(similarity, np.float64), np.array(merged, bool), record))
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def dedup_audit(asm: Assembled, policy: Policy) -> dict:
    """What a curator needs to judge the near-duplicate threshold, from the pairs this run verified:
    their similarities, the closest pairs on each side of the threshold (with both texts), the files
    that lost most of their records to dedup, the largest clusters, and the counts other thresholds
    would have given (records with a verified pair at or above each; pairs LSH never proposed are not
    known, and a different threshold could change which copy is canonical). The pairs are read a
    slice at a time into arrays: a dict a pair would grow with the corpus."""
    threshold = policy.dedup_config().threshold
    pairs = asm.pairs
    similarity, merged, record = _pair_columns(pairs)
    above = np.flatnonzero(similarity >= threshold)
    below = np.flatnonzero(similarity < threshold)
    above = above[np.argsort(similarity[above], kind="stable")][:BORDERLINE].tolist()
    below = below[np.argsort(-similarity[below], kind="stable")][:BORDERLINE].tolist()
    shown = [pairs[i] for i in above + below]
    wanted = {f"{p['source_file']}:{p['source_line']}" for p in shown} | {p["candidate_ref"] for p in shown}
    texts = {}
    for table in (asm.records, asm.duplicates):
        for lo, (files, lines) in columns(table, "source_file", "source_line"):
            for k, ref in enumerate(f"{f}:{line}" for f, line in zip(files, lines, strict=True)):
                if ref in wanted:
                    texts[ref] = table[lo + k]["text_raw"][:AUDIT_TEXT_CHARS]

    def row(p: dict) -> dict:
        ref = f"{p['source_file']}:{p['source_line']}"
        return {
            **p,
            "ref": ref,
            "text": texts.get(ref, ""),
            "candidate_text": texts.get(p["candidate_ref"], ""),
        }

    merged_now = len(np.unique(record[merged]))
    what_if = []
    for t in WHAT_IF:
        near = len(np.unique(record[similarity >= t]))
        what_if.append({"threshold": t, "near": near, "kept": asm.counts["kept"] + merged_now - near})
    removed = _count(asm.duplicates, "source_file")
    files = sorted(
        (
            {"file": src.source_file, "paragraphs": src.n_paragraphs, "duplicates": removed[src.source_file]}
            for src in asm.sources
            if removed[src.source_file]
        ),
        key=lambda f: (-f["duplicates"] / max(1, f["paragraphs"]), f["file"]),
    )
    dup_counts = _numbers(asm.records, "dup_count")
    largest = np.lexsort((np.arange(len(dup_counts)), -dup_counts))[:10].tolist()  # by count, then row
    return {
        "threshold": threshold,
        "pairs": len(pairs),
        "histogram": signal_histogram(similarity, {"threshold": threshold}),
        "above": [row(p) for p in shown[: len(above)]],
        "below": [row(p) for p in shown[len(above) :]],
        "what_if": what_if,
        "files": [{**f, "share": f["duplicates"] / max(1, f["paragraphs"])} for f in files[:20]],
        "largest_clusters": [
            {
                "ref": f"{asm.records[i]['source_file']}:{asm.records[i]['source_line']}",
                "copies": int(dup_counts[i]),
            }
            for i in largest
            if dup_counts[i]
        ],
    }


def build_metrics(
    *,
    run_id: str,
    input_dir: str,
    dataset_dir: str,
    asm: Assembled,
    policy: Policy,
    stage_seconds: dict[str, float],
    outcome: str,
    gates: list = (),
    run_key: str | None = None,
    changes: dict | None = None,
) -> dict:
    """Everything a run tells: the report's and the CLI's content, the Prefect artifacts, the manifest's
    source (``manifest_from_metrics``). ``gates``: ``GateResult``s; ``run_key``: what the dataset's bytes
    were made from (incremental/run_key.py)."""
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
        "languages": dict(_count(asm.records, "lang").most_common()),
        "header_languages": dict(_count(asm.records, "header_lang").most_common()),
        "fix_counts": asm.fix_counts,
        "length_histogram": length_histogram(_numbers(asm.records, "n_chars")),
        "checks": asm.check_counts,
        "signals": signal_charts(asm, policy),
        "dedup_audit": dedup_audit(asm, policy),
        "lost_words": lost_word_rows(asm),
        "text_lost_quarantined": asm.quarantine_reasons.get("text_lost", 0),
        "quality_policy": {
            "limits": policy.quality,
            "max_lost_words": policy.max_lost_words,
            "contacts": policy.contacts,
        },
        "contacts": contact_counts(asm, policy),
        "repair_samples": repair_samples(asm),
        "quarantine_reasons": asm.quarantine_reasons,
        "references": asm.references,
        "reference_policy": policy.reference,
        "stage_seconds": {k: round(v, 3) for k, v in stage_seconds.items()},
        "arrow_memory_pool": pa.default_memory_pool().backend_name,  # runtime.ARROW_DEFAULTS
        "code_version": code_fingerprint(),
        "policy_path": policy.path,
        "policy_sha256": policy.sha256,
        "dedup_config": {**asdict(policy.dedup_config()), "fingerprint": policy.dedup_config().fingerprint()},
        "libraries": library_versions(),
        "gates": [{"name": g.name, "passed": g.passed, "detail": g.detail} for g in gates],
        "run_key": run_key,
        "changes": changes,
    }


def manifest_from_metrics(metrics: dict) -> dict:
    """The manifest keeps what a consumer needs to trust and trace the dataset."""
    return {
        "created_at": metrics["created_at"],
        "code_version": metrics["code_version"],
        "policy_sha256": metrics["policy_sha256"],
        "run_key": metrics["run_key"],
        "dedup_config": metrics["dedup_config"],
        "counts": metrics["counts"],
        "libraries": metrics["libraries"],
        "references": [
            {k: r[k] for k in ("name", "sha256", "files", "id", "rows")}
            for r in metrics.get("references", ())
        ],
        "input_files": [
            {k: s.get(k) for k in ("source_file", "size", "sha256", "encoding", "confidence", "problem")}
            for s in metrics["sources"]
        ],
    }
