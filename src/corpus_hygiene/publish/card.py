"""What is published beside the data: a JSON schema of the tables, a dataset card (README.md) and
Croissant metadata (croissant.json)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from checks.schemas import DESCRIPTIONS, SCHEMA_VERSION, TABLES


def schema_json() -> str:
    tables = {
        name: [
            {
                "name": f.name,
                "type": str(f.type),
                "nullable": f.nullable,
                "description": DESCRIPTIONS[name][f.name],
            }
            for f in schema
        ]
        for name, schema in TABLES.items()
    }
    return (
        json.dumps({"schema_version": SCHEMA_VERSION, "tables": tables}, indent=2, ensure_ascii=False) + "\n"
    )


def _size_category(n: int) -> str:
    """The Hugging Face Hub's size category of ``n`` rows."""
    for limit, name in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if n < limit:
            return name
    return "1M<n<10M" if n < 10_000_000 else "10M<n<100M"


def _front_matter(metrics: dict, outputs: dict[str, dict]) -> str:
    """The YAML the Hugging Face Hub and ``datasets.load_dataset(folder)`` read: one config per table
    (records the default), the records' languages, size category, and a license field to fill in (the
    abstracts' own licences are their sources'). Each config's ``dataset_info`` description names its
    table's sha256: ``datasets`` keys its cache on the card's configs and infos (not on the files), so a
    re-published or another folder named alike loads its own rows, never a stale copy."""
    configs = "".join(
        f"- config_name: {name}\n  data_files: {name}.parquet\n"
        + ("  default: true\n" if name == "records" else "")
        for name in TABLES
    )
    infos = "".join(
        f"- config_name: {name}\n  description: '{name}.parquet, sha256 {out['sha256']}'\n"
        for name in TABLES
        if (out := outputs.get(f"{name}.parquet"))
    )
    languages = "".join(f"- {lang}\n" for lang in sorted(metrics["languages"]) if lang != "und") or "- en\n"
    return (
        f"---\nconfigs:\n{configs}dataset_info:\n{infos}language:\n{languages}license: unknown\n"
        f"size_categories:\n- {_size_category(metrics['counts']['kept'])}\n"
        f"pretty_name: corpus-hygiene abstracts ({metrics['run_id']})\n---\n\n"
    )


_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def _visible(text: str) -> str:
    """Control characters, line breaks and lone surrogates (a file name's undecodable bytes) as
    ``\\xNN`` / ``\\uNNNN``: a name stays on its line and writes as UTF-8."""
    return _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def md_code(text: str, *, cell: bool = False) -> str:
    """``text`` as a Markdown code span that nothing in it can end (CommonMark: a fence longer than any
    run of backticks inside, padded when the text starts or ends with one); HTML in it stays text.
    ``cell``: in a GFM table, where ``|`` is escaped even in code."""
    text = _visible(str(text))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|') if cell else text}{pad}{fence}"


def md_text(text: str) -> str:
    """``text`` as literal Markdown prose: every ASCII punctuation backslash-escaped (no markup, links,
    HTML or table cell breaks can form), control characters visible."""
    return _PUNCTUATION.sub(r"\\\1", _visible(str(text)))


def _references(refs: list[dict]) -> str:
    """The references the run was checked against, by name and content hash, and what each removed."""
    if not refs:
        return ""
    rows = "\n".join(
        f"| {md_code(r['name'], cell=True)} | `{r['sha256'][:16]}` | {r['rows']} | "
        f"{r['exact'] + r['near']} | {r['contaminated']} |"
        for r in refs
    )
    return f"""
## References

Checked against these datasets: their copies are in `duplicates.parquet` (kind `reference`, pointing at
the reference's file#row and id), records containing their short texts in `quarantine.parquet`
(`contaminated`).

| reference | sha256 | rows | copies removed | contaminated |
|---|---|---|---|---|
{rows}
"""


def dataset_card(metrics: dict, outputs: dict[str, dict]) -> str:
    c = metrics["counts"]
    langs = md_text(", ".join(f"{k} {v}" for k, v in metrics["languages"].items()) or "none")
    reasons = (
        "\n".join(f"| {md_code(k, cell=True)} | {v} |" for k, v in metrics["quarantine_reasons"].items())
        or "| (none) | 0 |"
    )
    folder, policy = md_code(Path(metrics["input_dir"]).name), md_code(Path(metrics["policy_path"]).name)
    fields = "\n".join(f"| `{k}` | {v} |" for k, v in DESCRIPTIONS["records"].items())
    limits = metrics.get("quality_policy", {})
    quality = ", ".join(f"{k} {v:g}" for k, v in limits.get("limits", {}).items())
    gates = "\n".join(
        f"| {md_text(g['name'])} | {'pass' if g['passed'] else 'FAIL'} | {md_text(g['detail'])} |"
        for g in metrics.get("gates", [])
    )
    return f"""{_front_matter(metrics, outputs)}# corpus-hygiene dataset

Clean, deduplicated paper abstracts produced by corpus-hygiene {metrics["code_version"]} in run
`{metrics["run_id"]}` ({metrics["created_at"]}) from a folder named {folder}.
Schema version {SCHEMA_VERSION}; `schema.json` describes every column; `manifest.json` lists every input
and output file with its sha256. Check it with `hygiene validate <this folder>` or read it with
`corpus_hygiene.read_dataset(<this folder>)`, which runs the same checks.

## Counts

| ingested | kept | duplicates | quarantined | files |
|---|---|---|---|---|
| {c["ingested"]} | {c["kept"]} | {c["duplicates"]} | {c["quarantined"]} | {c["files"]} |

Languages of kept records: {langs}.
{_references(metrics.get("references", ()))}
## Files

- `records.parquet`: one row per kept record (fields below).
- `duplicates.parquet`: every dropped duplicate, with the record it duplicates and why that one was kept.
- `quarantine.parquet`: every rejected record or unreadable file, with a reason code and a sentence.
- `pairs.parquet`: every near-duplicate candidate pair whose similarity was verified, above the threshold
  or below it (exact copies are not pairs): the duplicate audit, to redo in pandas.
- `croissant.json`: the four tables as MLCommons Croissant 1.0 metadata (`mlcroissant.Dataset`).

An empty table has no rows to load: Hugging Face `datasets` raises for an empty split ("corresponds to no
data"); pandas, pyarrow and DuckDB read it as 0 rows.

| field | meaning |
|---|---|
{fields}

## Quarantine reasons

| reason | rows |
|---|---|
{reasons}

## How it was produced

Decoding (BOM, UTF-8, charset detection) → header and paragraph split → language identification →
cleaning (ftfy, LaTeX to Unicode, markdown, PDF artefacts, NFC; words checked against the input) →
quality signals → the named record checks of the policy → exact and near-duplicate detection
(MinHash LSH, verified similarity) → gates → publish.
Policy {policy} (sha256 `{metrics["policy_sha256"][:16]}…`); dedup config
`{metrics["dedup_config"]["fingerprint"]}`.

Every kept record is within the policy's quality limits ({quality or "none"}); it lost at most
{limits.get("max_lost_words", 0)} words to cleaning (`lost_words`); its contact details were handled as
`{limits.get("contacts", "keep")}` (counts in `pii`).

## Gates

| gate | result | detail |
|---|---|---|
{gates}
"""


# The JSON-LD context every Croissant 1.0 file carries (the specification's, verbatim).
CROISSANT_CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def _croissant_type(arrow_type) -> str:
    import pyarrow as pa

    if pa.types.is_boolean(arrow_type):
        return "sc:Boolean"
    if pa.types.is_integer(arrow_type):
        return "sc:Integer"
    if pa.types.is_floating(arrow_type):
        return "sc:Float"
    return "sc:Text"


def _croissant_field(table: str, field) -> dict:
    """A column as a Croissant field: lists are repeated fields, a struct has one sub-field per member."""
    import pyarrow as pa

    source = {"fileObject": {"@id": f"{table}.parquet"}, "extract": {"column": field.name}}
    out = {"@type": "cr:Field", "@id": f"{table}/{field.name}", "name": field.name,
           "description": DESCRIPTIONS[table][field.name]}  # fmt: skip
    if pa.types.is_struct(field.type):
        out["subField"] = [
            {
                "@type": "cr:Field",
                "@id": f"{table}/{field.name}/{member.name}",
                "name": member.name,
                "dataType": _croissant_type(member.type),
                "source": dict(source, transform={"jsonPath": member.name}),
            }  # fmt: skip
            for member in field.type
        ]
        return out
    if pa.types.is_list(field.type):
        return out | {"dataType": _croissant_type(field.type.value_type), "repeated": True, "source": source}
    return out | {"dataType": _croissant_type(field.type), "source": source}


def croissant_json(metrics: dict, outputs: dict[str, dict]) -> str:
    """The dataset as MLCommons Croissant 1.0 metadata: each table a FileObject (with the sha256 the
    manifest has) and a RecordSet whose fields are its columns, described as in schema.json."""
    tables = [name for name in TABLES if f"{name}.parquet" in outputs]
    doc = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": f"corpus-hygiene-{metrics['run_id']}",
        "description": "Clean, deduplicated paper abstracts with provenance; the duplicates dropped, the "
        "records quarantined and the verified near-duplicate pairs "
        f"(corpus-hygiene {metrics['code_version']}, run {metrics['run_id']}).",
        "citeAs": f"@misc{{corpus_hygiene_{metrics['run_id'].replace('-', '_')}, title={{corpus-hygiene "
        f"abstracts, run {metrics['run_id']}}}, year={{{metrics['created_at'][:4]}}}}}",
        "datePublished": metrics["created_at"][:10],
        "version": f"{SCHEMA_VERSION}.0.0",
        "license": "unknown",
        "inLanguage": sorted(lang for lang in metrics["languages"] if lang != "und"),
        "distribution": [
            {
                "@type": "cr:FileObject",
                "@id": f"{name}.parquet",
                "name": f"{name}.parquet",
                "contentUrl": f"{name}.parquet",
                "encodingFormat": "application/x-parquet",
                "sha256": outputs[f"{name}.parquet"]["sha256"],
            }  # fmt: skip
            for name in tables
        ],
        "recordSet": [
            {
                "@type": "cr:RecordSet",
                "@id": name,
                "name": name,
                "field": [_croissant_field(name, field) for field in TABLES[name]],
            }  # fmt: skip
            for name in tables
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def beside_the_tables(metrics: dict) -> dict:
    """The files published beside the tables, for ``StagedVersion.commit``; the card and croissant.json
    are made once the tables' sha256 are known."""
    return {
        "schema.json": schema_json(),
        "README.md": lambda outputs: dataset_card(metrics, outputs),
        "croissant.json": lambda outputs: croissant_json(metrics, outputs),
    }
