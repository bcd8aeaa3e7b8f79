"""No paragraph and no file can fail a run: an unexpected exception in a per-record or per-file step
quarantines that record or file as `processing_error`, naming the step (isolation.py)."""

import pytest

from checks.gates import evaluate_gates
from corpus_hygiene.ingest.discover import discover
from corpus_hygiene.pipeline.process import process_file

from .test_checks import _frames

ABSTRACT = "We study retrieval for question answering and show that a small verifier improves every model."


def _process(tmp_path, text: str, policy):
    (tmp_path / "f.txt").write_text(text, encoding="utf-8")
    (src,) = discover(tmp_path, policy.max_file_bytes).files
    return process_file(src, policy)


def _raise_on(marker: str, real):
    def fails(text, *args):
        if marker in text:
            raise KeyError("2")
        return real(text, *args)

    return fails


@pytest.mark.parametrize(
    ("module", "name", "step"),
    [
        ("corpus_hygiene.clean", "latex_to_unicode", "latex"),
        ("corpus_hygiene.clean", "strip_emphasis", "markdown"),
        ("corpus_hygiene.pipeline.process", "detect_language", "language"),
        ("corpus_hygiene.pipeline.process", "signals_of", "signals"),
        ("corpus_hygiene.pipeline.process", "signature_of", "signature"),
    ],
)
def test_a_step_that_raises_quarantines_its_paragraph_alone_naming_the_step(
    tmp_path, policy, monkeypatch, module, name, step
):
    import importlib

    target = importlib.import_module(module)
    monkeypatch.setattr(target, name, _raise_on("BOOM", getattr(target, name)))
    text = f"ICLR 2026 Papers\n\n{ABSTRACT}\n\n\\emph{{BOOM}} {ABSTRACT}\n\n{ABSTRACT} Again.\n"
    result = _process(tmp_path, text, policy)
    assert [r.source_line for r in result.records] == [3, 7]
    assert [(r.source_line, r.reason, r.detail) for r in result.rejected] == [
        (5, "processing_error", f"{step}: KeyError: '2'")
    ]
    assert result.rejected[0].text_raw == f"\\emph{{BOOM}} {ABSTRACT}"
    assert result.source.problem is None


def test_a_file_step_that_raises_quarantines_the_file_and_every_paragraph_read(tmp_path, policy, monkeypatch):
    import corpus_hygiene.pipeline.process as process

    real = process.paragraphs_from
    monkeypatch.setattr(process, "paragraphs_from", lambda lines, *a: _first_then_fail(real(lines, *a)))
    result = _process(tmp_path, f"ICLR 2026 Papers\n\n{ABSTRACT}\n\n{ABSTRACT} Two.\n", policy)
    assert result.records == []
    assert [(r.source_line, r.reason, r.detail) for r in result.rejected] == [
        (3, "processing_error", "parse: ValueError: splitter bug"),
        (None, "processing_error", "parse: ValueError: splitter bug"),
    ]
    assert result.source.problem == "processing_error" and result.source.n_paragraphs == 1


def _first_then_fail(paragraphs):
    yield next(paragraphs)
    raise ValueError("splitter bug")


def test_a_record_the_checks_cannot_take_is_quarantined_and_the_others_checked(tmp_path, policy, monkeypatch):
    import corpus_hygiene.pipeline.record_checks as record_checks

    real = record_checks.candidate_frame

    def frame(rows):
        if any("BOOM" in row["text"] for row in rows):
            raise TypeError("bad row")
        return real(rows)

    monkeypatch.setattr(record_checks, "candidate_frame", frame)
    result = _process(tmp_path, f"ICLR 2026 Papers\n\n{ABSTRACT}\n\nBOOM {ABSTRACT}\n\nTBA\n", policy)
    assert [r.source_line for r in result.records] == [3]
    assert sorted((r.source_line, r.reason) for r in result.rejected) == [
        (5, "processing_error"),
        (7, "not_placeholder"),
    ]
    assert result.rejected[0].detail == "record_checks: TypeError: bad row"


def test_the_processing_error_gate_fails_above_the_policy_share(policy):
    counts = {"ingested": 200, "kept": 197, "duplicates": 0, "quarantined": 3, "files": 1}
    failing = evaluate_gates(counts, _frames(0), policy, reasons={"processing_error": 3})
    gates = {g.name: g for g in failing}
    assert not gates["processing_errors"].passed
    assert gates["processing_errors"].detail == (
        "3 quarantined as processing_error (1.5% of ingested); the policy allows 1%"
    )
    ok = {g.name: g for g in evaluate_gates(counts, _frames(0), policy, reasons={"processing_error": 2})}
    assert ok["processing_errors"].passed
