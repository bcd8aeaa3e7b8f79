"""The published folder loads the way data people load Parquet: the README's lines, run as written."""

import re

import pytest

from .conftest import EXAMPLES


def _publish(target, corpus, run_id: str):
    """``corpus`` (a folder, or a list of its files) published to ``target`` as a run would publish it."""
    from checks import load_policy
    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline.assemble import assemble
    from corpus_hygiene.pipeline.process import process_file
    from corpus_hygiene.publish.card import beside_the_tables
    from corpus_hygiene.publish.dataset import publish
    from corpus_hygiene.publish.metrics import build_metrics

    policy = load_policy()
    found = discover(corpus, policy.max_file_bytes)
    asm = assemble([process_file(f, policy) for f in found.files], found.refused, found.skipped, policy)
    metrics = build_metrics(
        run_id=run_id, input_dir=str(corpus), dataset_dir="data/clean", asm=asm,
        policy=policy, stage_seconds={}, outcome="published",
    )  # fmt: skip
    publish(target, metrics["run_id"], asm.tables(), {}, extra_files=beside_the_tables(metrics))
    return asm


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    target = tmp_path_factory.mktemp("loading") / "data" / "clean"
    return target, _publish(target, EXAMPLES, "20261205T000000Z-000000")


def _offline_hf(monkeypatch, home):
    monkeypatch.setenv("HF_HOME", str(home))  # the datasets cache; nothing is downloaded
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_hugging_face_loads_what_is_published_now_never_a_cached_copy(tmp_path, monkeypatch):
    import shutil

    import datasets

    _offline_hf(monkeypatch, tmp_path / "hf")  # one cache for every load below, as a user has
    part = tmp_path / "part"
    shutil.copytree(EXAMPLES, part)
    shutil.rmtree(part / "zh")
    first = _publish(tmp_path / "a" / "clean", part, "20261205T000000Z-000001")
    assert datasets.load_dataset(str(tmp_path / "a" / "clean"))["train"].num_rows == len(first.records)
    again = _publish(tmp_path / "a" / "clean", EXAMPLES, "20261205T000000Z-000002")  # a re-run, more rows
    assert len(again.records) > len(first.records)
    assert datasets.load_dataset(str(tmp_path / "a" / "clean"))["train"].num_rows == len(again.records)
    other = _publish(tmp_path / "b" / "clean", part, "20261205T000000Z-000003")  # another folder, same name
    assert datasets.load_dataset(str(tmp_path / "b" / "clean"))["train"].num_rows == len(other.records)
    loaded = datasets.load_dataset(str(tmp_path / "a" / "clean"), "quarantine")["train"]
    assert loaded.num_rows == len(again.quarantine)


def test_empty_tables_have_no_row_group_and_read_as_zero_rows(tmp_path):
    """A 0-row row group fails Hugging Face's reader (ArrowInvalid: BatchSize); with none, pyarrow, pandas
    and DuckDB read 0 rows. (``datasets`` 5.2 cannot load an empty split from any Parquet file, its own
    ``to_parquet``'s included: "corresponds to no data"; the card says so.)"""
    import duckdb
    import pandas as pd
    import pyarrow.parquet as pq

    import corpus_hygiene

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "iclr.txt").write_text(
        "ICLR 2026 Papers\n\nWe propose a sparse attention method for long documents and show that it "
        "halves the memory of training while keeping accuracy on four benchmarks.\n",
        "utf-8",
    )
    asm = _publish(tmp_path / "clean", tmp_path / "in", "20261205T000000Z-000004")
    assert len(asm.records) == 1 and not len(asm.quarantine) and not len(asm.duplicates)
    for name in ("duplicates", "quarantine", "pairs"):
        path = tmp_path / "clean" / f"{name}.parquet"
        assert pq.ParquetFile(path).metadata.num_row_groups == 0, name
        assert pq.read_table(path).num_rows == len(pd.read_parquet(path)) == 0
        assert len(corpus_hygiene.read_dataset(tmp_path / "clean", table=name)) == 0
        assert duckdb.sql(f"SELECT count(*) FROM '{path}'").fetchall() == [(0,)]


def test_the_readme_loading_lines_run_and_give_every_table(published, tmp_path, monkeypatch):
    target, asm = published
    readme = (EXAMPLES.parents[1] / "README.md").read_text("utf-8")
    code = re.search(r"Load it with.*?```python\n(.*?)```", readme, re.S).group(1)
    _offline_hf(monkeypatch, tmp_path / "hf")
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
    from checks.schemas import TABLES

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
