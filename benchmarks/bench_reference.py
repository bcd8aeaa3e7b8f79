"""A run against a reference (issue 58's targets): a 100k-abstract reference Parquet, and a 20k-abstract
run in which 10% are planted copies of reference rows (half exact with case or spacing changed, half
near: 5-10% of the words edited) and 1% hard negatives (a new abstract opening with a reference
row's first sentences, a third of it at most). Three `hygiene run`s on one corpus: without the
reference; with it, the index made; with it cached (the per-file cache and the dataset removed, so
every file is processed again). Reports the planted copies' recall (pointed at the very row
planted), false reference merges among hard negatives and new abstracts, and each run's wall and
process-tree CPU.

    .venv/bin/python -m benchmarks.bench_reference [--reference-rows 100000] [--abstracts 20000]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.bench_dedup import join
from benchmarks.bench_dedup_scale import Maker
from benchmarks.bench_e2e import HEADERS, PER_FILE, run
from benchmarks.common import save
from benchmarks.corpora import load_pools


def _shares_its_opening(text: str, lang: str, maker: Maker, rng: random.Random) -> str | None:
    """A new abstract that opens with ``text``'s first one or two sentences (clauses in Chinese and
    Japanese), which make at most a third of it; None when ``text`` has too few."""
    opening = Maker._pieces(text, lang)[: rng.choice((1, 2))]
    negative = join(opening + Maker._pieces(maker.abstract(lang, rng), lang)[len(opening) :], lang)
    return negative if 3 * len(join(opening, lang)) <= len(negative) else None


def build(folder: Path, ref_rows: int, n: int, seed: int) -> tuple[Path, dict, set]:
    """The reference file, and the run's corpus under ``folder``: the planted copies' (file, line) → the
    reference id they copy, and the hard negatives' (file, line)."""
    rng, maker = random.Random(seed), Maker(load_pools())
    rows = [(maker.language(rng),) for _ in range(ref_rows)]
    rows = [(lang, maker.abstract(lang, rng)) for (lang,) in rows]
    ref = folder / "reference.parquet"
    ids = [f"ref-{i:06d}" for i in range(ref_rows)]
    pq.write_table(pa.table({"id": ids, "text": [t for _, t in rows]}), ref)
    corpus, copies, negatives = folder / "in", {}, set()
    corpus.mkdir()
    written, f = 0, 0
    while written < n:
        lang, body = maker.language(rng), []
        for k in range(min(PER_FILE, n - written)):
            where, r = (f"run{f:05d}.txt", 3 + 2 * k), rng.random()
            i = rng.randrange(ref_rows)
            ref_lang, text = rows[i]
            if r < 0.05:
                copies[where] = ids[i]
                body.append(text.upper() if rng.random() < 0.5 else "  " + text.replace(" ", "  "))
            elif r < 0.10:
                copies[where] = ids[i]
                body.append(maker.near_copy(text, ref_lang, rng, rng.uniform(0.05, 0.10)))
            elif r < 0.11 and (negative := _shares_its_opening(text, ref_lang, maker, rng)):
                negatives.add(where)
                body.append(negative)
            else:
                body.append(maker.abstract(lang, rng))
        header = HEADERS[lang].format(y=2020 + f % 6)
        (corpus / f"run{f:05d}.txt").write_text(header + "\n\n" + "\n\n".join(body) + "\n", "utf-8")
        written += len(body)
        f += 1
    return ref, copies, negatives


def judged(dataset: Path, copies: dict, negatives: set) -> dict:
    dups = pq.read_table(dataset / "duplicates.parquet").to_pylist()
    quarantined = {
        (q["source_file"], q["source_line"])
        for q in pq.read_table(dataset / "quarantine.parquet").to_pylist()
    }
    found = {
        (d["source_file"], d["source_line"]): d["canonical_id"] for d in dups if d["kind"] == "reference"
    }
    right = sum(found.get(where) == ref_id for where, ref_id in copies.items())
    return {
        "planted_copies": len(copies),
        "found_at_the_planted_row": right,
        "recall": round(right / len(copies), 4),
        "planted_copies_quarantined": len(copies.keys() & quarantined),
        "hard_negatives": len(negatives),
        "hard_negatives_merged_with_the_reference": len(negatives & found.keys()),
        "new_abstracts_merged_with_the_reference": len(found.keys() - copies.keys() - negatives),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reference-rows", type=int, default=100_000)
    parser.add_argument("--abstracts", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-reference-") as tmp:
        tmp = Path(tmp)
        ref, copies, negatives = build(tmp, args.reference_rows, args.abstracts, seed=58)
        engine, with_ref = ("--workers", "1"), ("--reference", str(ref))
        plain = run(tmp / "in", tmp / "plain", engine, ("--no-cache",))
        indexing = run(tmp / "in", tmp / "ref", engine, with_ref)
        for path in [tmp / "ref" / "clean", tmp / "ref" / ".clean.versions"]:
            path.unlink() if path.is_symlink() else shutil.rmtree(path)
        for entry in (
            tmp / "ref" / ".clean.cache"
        ).iterdir():  # every file's result, not the reference's index
            if entry.name != "references":
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        cached = run(tmp / "in", tmp / "ref", engine, with_ref)
        result = {
            "reference_rows": args.reference_rows,
            "abstracts": args.abstracts,
            **judged(tmp / "ref" / "clean", copies, negatives),
            "cpu_ratio_cached_vs_without": round(
                cached["cpu_seconds_process_tree"] / plain["cpu_seconds_process_tree"], 2
            ),
            "wall_ratio_cached_vs_without": round(cached["wall_seconds"] / plain["wall_seconds"], 2),
            "runs": {
                "without_reference": plain,
                "indexing_the_reference": indexing,
                "reference_cached": cached,
            },
        }
    save(f"reference_{args.reference_rows}_{args.abstracts}", result)
    print({k: v for k, v in result.items() if k != "runs"})
    for name, r in result["runs"].items():
        print(name, r["wall_seconds"], "s wall,", r["cpu_seconds_process_tree"], "s CPU,", r["stage_seconds"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
