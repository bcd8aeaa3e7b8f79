"""The published folder loads the way data people load Parquet: the README's lines, run as written."""

import re

import pytest

from .conftest import EXAMPLES


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    from corpus_hygiene.checks import load_policy
    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline.assemble import assemble
    from corpus_hygiene.pipeline.process import process_file
    from corpus_hygiene.publish.card import beside_the_tables
    from corpus_hygiene.publish.dataset import publish
    from corpus_hygiene.publish.metrics import build_metrics

    policy = load_policy()
    found = discover(EXAMPLES, policy.max_file_bytes)
    asm = assemble([process_file(f, policy) for f in found.files], found.refused, found.skipped, policy)
    metrics = build_metrics(
        run_id="20261205T000000Z-000000", input_dir=str(EXAMPLES), dataset_dir="data/clean", asm=asm,
        policy=policy, stage_seconds={}, outcome="published",
    )  # fmt: skip
    target = tmp_path_factory.mktemp("loading") / "data" / "clean"
    publish(target, metrics["run_id"], asm.tables(), {}, extra_files=beside_the_tables(metrics))
    return target, asm


def test_the_readme_loading_lines_run_and_give_every_table(published, tmp_path, monkeypatch):
    target, asm = published
    readme = (EXAMPLES.parents[1] / "README.md").read_text("utf-8")
    code = re.search(r"Load it with the tools you use.*?```python\n(.*?)```", readme, re.S).group(1)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # the datasets cache; nothing is downloaded
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    names: dict = {}
    exec(code.replace('"data/clean', f'"{target}').replace("'data/clean", f"'{target}"), names)  # noqa: S102
    kept = len(asm.records)
    assert len(names["frame"]) == names["table"].num_rows == names["hf"]["train"].num_rows == kept
    assert names["quarantine"].num_rows == len(asm.quarantine)
    assert names["hf_pairs"]["train"].num_rows == len(asm.pairs)
    assert sum(n for _, n in names["langs"]) == kept


def test_read_dataset_reads_each_table_and_refuses_an_unknown_one(published):
    import corpus_hygiene

    target, asm = published
    for name, rows in asm.tables().items():
        assert len(corpus_hygiene.read_dataset(target, table=name)) == len(rows), name
    with pytest.raises(ValueError, match="no table 'dups'.*records, duplicates, quarantine, pairs"):
        corpus_hygiene.read_dataset(target, table="dups")


def test_nothing_published_names_a_path_of_this_machine(published):
    target, _ = published
    for path in target.iterdir():
        if path.suffix in (".json", ".md"):
            text = path.read_text("utf-8")
            assert str(EXAMPLES) not in text and "/tmp/" not in text and "/home/" not in text, path.name


def test_croissant_json_describes_every_table_and_mlcroissant_reads_it(published):
    import json

    import mlcroissant

    target, asm = published
    croissant = json.loads((target / "croissant.json").read_text("utf-8"))
    outputs = json.loads((target / "manifest.json").read_text("utf-8"))["outputs"]
    assert {f["name"]: f["sha256"] for f in croissant["distribution"]} == {
        name: meta["sha256"] for name, meta in outputs.items() if name.endswith(".parquet")
    }
    dataset = mlcroissant.Dataset(jsonld=str(target / "croissant.json"))  # validates, or raises
    for name, rows in asm.tables().items():
        read = list(dataset.records(record_set=name))
        assert len(read) == len(rows), name
    kept = {r["records/record_id"].decode(): r for r in dataset.records(record_set="records")}
    first = asm.records[0]
    assert kept[first["record_id"]]["records/text"].decode() == first["text"]
    assert kept[first["record_id"]]["records/pii"] == {
        "records/pii/email": first["pii"]["email"],
        "records/pii/phone": first["pii"]["phone"],
    }


def test_the_readme_names_every_published_column_and_no_other():
    from corpus_hygiene.publish.dataset import TABLES

    readme = (EXAMPLES.parents[1] / "README.md").read_text("utf-8")
    groups = {
        name: re.findall(r"`(\w+)`", re.search(rf"{name}: (.*?)[;.] ", readme, re.S | re.I).group(1))
        for name in ("provenance", "signals")
    }
    for table, schema in TABLES.items():
        row = re.search(rf"\| `data/clean/{table}\.parquet` \| [^:|]*: ([^|]*) \|", readme).group(1)
        named = []
        for item in re.sub(r" \([^)]*\)", "", row).split(", "):
            named += groups[item] if item in groups else [item.strip("`")]
        assert named == schema.names, table
