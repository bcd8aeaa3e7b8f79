"""publish/metrics.py reads the records a slice at a time (``rows.columns``): the figures do not depend
on the slice size, and they are those a count over the rows' dicts gives."""

from collections import Counter
from unittest import mock

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from corpus_hygiene.ingest import discover
from corpus_hygiene.pipeline.assemble import assemble
from corpus_hygiene.pipeline.process import process_file
from corpus_hygiene.publish.metrics import build_metrics

from .conftest import EXAMPLES, SEEDS, needs_seeds


@pytest.fixture(scope="module")
def asm(policy):
    found = discover(EXAMPLES, policy.max_file_bytes)
    return assemble([process_file(f, policy) for f in found.files], found.refused, found.skipped, policy)


def _metrics(asm, policy) -> dict:
    m = build_metrics(run_id="r", input_dir="in", dataset_dir="out", asm=asm, policy=policy,
                      stage_seconds={}, outcome="published")  # fmt: skip
    m.pop("created_at")
    return m


def test_figures_read_in_slices_of_two_rows_equal_those_read_at_once(asm, policy):
    whole = _metrics(asm, policy)
    with mock.patch("corpus_hygiene.store.rows.READ_ROWS", 2):
        assert _metrics(asm, policy) == whole
    rows = list(asm.records)
    assert len(rows) > 10 and whole["languages"] == dict(Counter(r["lang"] for r in rows).most_common())
    assert whole["contacts"]["emails"] == sum(r["pii"]["email"] for r in rows) > 0
    assert whole["contacts"]["records_with_phone"] == sum(1 for r in rows if r["pii"]["phone"])
    first = next(r for r in rows if r["fixes"])  # the first repaired record (provenance order) is a sample
    assert whole["repair_samples"][0]["ref"] == f"{first['source_file']}:{first['source_line']}"
    assert sum(s["kept"] for s in whole["sources"]) == len(rows)
    assert sum(b["value"] for b in whole["length_histogram"]) == len(rows)


@pytest.fixture(scope="module")
def paired(policy, tmp_path_factory):
    """A corpus with near copies on both sides of the threshold (tests/report_corpus.py), 300 records."""
    from .report_corpus import build

    root = tmp_path_factory.mktemp("paired")
    build(root, records=300, files=6)
    found = discover(root, policy.max_file_bytes)
    return assemble([process_file(f, policy) for f in found.files], found.refused, found.skipped, policy)


def test_the_duplicate_audit_is_what_the_pairs_dicts_give(paired, policy):
    asm = paired
    with mock.patch("corpus_hygiene.store.rows.READ_ROWS", 7):
        audit = _metrics(asm, policy)["dedup_audit"]
    pairs, t = list(asm.pairs), audit["threshold"]
    assert audit["pairs"] == len(pairs) and any(p["similarity"] < t for p in pairs)
    above = sorted((p for p in pairs if p["similarity"] >= t), key=lambda p: p["similarity"])
    below = sorted((p for p in pairs if p["similarity"] < t), key=lambda p: -p["similarity"])
    for shown, expected in ((audit["above"], above), (audit["below"], below)):
        assert [{k: p[k] for k in expected[0]} for p in shown] == expected[:20]
    for row in audit["what_if"]:
        near = {(p["source_file"], p["source_line"]) for p in pairs if p["similarity"] >= row["threshold"]}
        merged = {(p["source_file"], p["source_line"]) for p in pairs if p["merged"]}
        assert (row["near"], row["kept"]) == (len(near), len(asm.records) + len(merged) - len(near))
    assert sum(b["count"] for b in audit["histogram"]["bins"]) == len(pairs)


@pytest.mark.parametrize("corpus", ["examples", pytest.param("seeds", marks=needs_seeds)])
def test_metrics_and_manifest_files_are_the_bytes_of_the_stdlibs_indented_sorted_json(corpus, asm, policy):
    import json

    from corpus_hygiene.atomic import json_document
    from corpus_hygiene.publish.metrics import manifest_from_metrics

    if corpus == "seeds":
        found = discover(SEEDS, policy.max_file_bytes)
        asm = assemble([process_file(f, policy) for f in found.files], found.refused, found.skipped, policy)
    metrics = _metrics(asm, policy) | {"created_at": "2026-12-06T23:59:59+00:00"}
    assert any(not s["source_file"].isascii() or s["header"] and not s["header"].isascii()
               for s in metrics["sources"])  # fmt: skip
    for doc in (metrics, manifest_from_metrics(metrics)):
        stdlib = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        assert json_document(doc) == stdlib.encode()


_hostile = st.text(
    st.one_of(st.sampled_from("`<>|&[]()!*_\\#\n\r\t\x00\u2028 -:'\"{}"), st.characters(codec="utf-8")),
    min_size=1, max_size=30,
)  # fmt: skip


@pytest.fixture(scope="module")
def card_metrics(asm, policy) -> dict:
    return _metrics(asm, policy) | {"created_at": "2026-12-07T00:00:00Z"}


@settings(max_examples=200)
@given(folder=_hostile, policy_name=_hostile, detail=_hostile)
def test_hostile_names_in_the_dataset_card_stay_literal_text(card_metrics, folder, policy_name, detail):
    from markdown_it import MarkdownIt

    from corpus_hygiene.publish.card import _visible, dataset_card

    folder, policy_name = folder.replace("/", "_"), policy_name.replace("/", "_")  # names, not paths
    assume({folder, policy_name}.isdisjoint({".", ".."}))
    metrics = card_metrics | {"input_dir": f"/x/{folder}", "policy_path": f"/p/{policy_name}"}
    metrics["gates"] = [{"name": "quarantine_share", "passed": False, "detail": detail}]
    card = dataset_card(metrics, {"records.parquet": {"sha256": "0" * 64}})
    tokens = MarkdownIt("commonmark").enable("table").parse(card.split("---\n", 2)[2])
    inline = [t for block in tokens for t in (block.children or [])]
    assert not [t for t in tokens + inline if t.type in ("html_block", "html_inline", "link_open", "image")]
    codes = [t.content for t in inline if t.type == "code_inline"]
    for name in (folder, policy_name):  # each name whole in one code span (CommonMark trims one pad)
        assert any(c.strip() == _visible(name).strip() for c in codes), (name, codes)
    gates = tokens[max(i for i, t in enumerate(tokens) if t.type == "table_open") :]
    assert [t.type for t in gates].count("td_open") == 3  # the gates table: one row of three cells
    name, result, shown = [t for t in gates if t.type == "inline"][-3:]
    assert (name.children[0].content, result.content) == ("quarantine_share", "FAIL")
    assert "".join(c.content for c in shown.children) == _visible(detail).strip()  # as written, literally
