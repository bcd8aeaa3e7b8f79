"""corpus-hygiene's near-duplicate step side by side with datatrove's MinHash dedup, same records.

Corpus: bench_dedup_scale's (new abstracts in 7 languages from ../shared/corpora, 10% planted copies
with 0-10% token edits), with its ground truth: the planted copy → source links. Both tools get the
same texts; both run on one core (datatrove: LocalPipelineExecutor, one worker). Scored pairwise:
a pair of documents is predicted duplicate when the tool puts them in one cluster, true when the planted
links join them. Datatrove runs from the benchmark-only venv .venv-datatrove (`make bench-datatrove`
makes it: datatrove + spacy, whose blank English tokenizer datatrove uses; nothing is downloaded).

    .venv/bin/python -m benchmarks.bench_datatrove [--records 100000]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

from benchmarks.bench_dedup_scale import Maker
from benchmarks.common import ROOT, save
from benchmarks.corpora import load_pools
from checks import load_policy
from corpus_hygiene.dedup.near import find_near_duplicates

VENV = ROOT / ".venv-datatrove"
CONFIGS = {  # datatrove's defaults, and the shingles/bands closest to ours
    "datatrove defaults (5-grams, 14x8)": (5, 14, 8),
    "datatrove 2-grams, 32x4": (2, 32, 4),
}


def build(n: int, rng: random.Random) -> tuple[list[str], list[int | None]]:
    maker = Maker(load_pools())
    texts: list[str] = []
    langs: list[str] = []
    source: list[int | None] = []
    for i in range(n):
        if i > 1000 and rng.random() < 0.10:
            j = rng.randrange(i)
            texts.append(maker.near_copy(texts[j], langs[j], rng, rng.uniform(0.0, 0.10)))
            langs.append(langs[j])
            source.append(j)
        else:
            langs.append(maker.language(rng))
            texts.append(maker.abstract(langs[-1], rng))
            source.append(None)
    return texts, source


def _find(parent: dict[int, int], x: int) -> int:
    while parent.get(x, x) != x:
        x = parent[x] = parent.get(parent[x], parent[x])
    return x


def pairs_of(links: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """Every within-cluster pair of the clusters that ``links`` join."""
    parent: dict[int, int] = {}
    for a, b in links:
        ra, rb = _find(parent, a), _find(parent, b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    clusters: dict[int, list[int]] = {}
    for x in {x for link in links for x in link}:
        clusters.setdefault(_find(parent, x), []).append(x)
    return {p for members in clusters.values() for p in combinations(sorted(members), 2)}


def score(predicted: set, truth: set) -> dict:
    hit = len(predicted & truth)
    p = hit / len(predicted) if predicted else 1.0
    r = hit / len(truth) if truth else 1.0
    return {
        "precision": round(p, 4),
        "recall": round(r, 4),
        "f1": round(2 * p * r / (p + r) if p + r else 0, 4),
    }


def run_datatrove(
    texts: list[str], tmp: Path, n_grams: int, buckets: int, per_bucket: int
) -> tuple[float, set]:
    work = tmp / f"dt_{n_grams}_{buckets}_{per_bucket}"
    (work / "in").mkdir(parents=True)
    with (work / "in" / "docs.jsonl").open("w") as out:
        for i, text in enumerate(texts):
            out.write(json.dumps({"id": str(i), "text": text}, ensure_ascii=False) + "\n")
    proc = subprocess.run(
        [
            str(VENV / "bin" / "python"),
            str(ROOT / "benchmarks" / "datatrove_runner.py"),
            str(work / "in"),
            str(work),
            str(n_grams),
            str(buckets),
            str(per_bucket),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]
    members: dict[int, list[int]] = {}
    for line in (work / "clusters.jsonl").open():
        doc = json.loads(line)
        if doc["cluster"] != -1:
            members.setdefault(doc["cluster"], []).append(int(doc["id"]))
    links = [(m[0], x) for m in members.values() for x in m[1:]]
    return seconds, pairs_of(links)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    if not (VENV / "bin" / "python").exists():
        print("needs the benchmark venv: make bench-datatrove", file=sys.stderr)
        return 2
    texts, source = build(args.records, random.Random(11))
    truth = pairs_of([(j, i) for i, j in enumerate(source) if j is not None])
    start = time.perf_counter()
    matches = find_near_duplicates(texts, load_policy().dedup_config())
    ours_s = time.perf_counter() - start
    result = {
        "records": args.records,
        "true_pairs": len(truth),
        "corpus-hygiene (signatures + LSH + verification + clusters)": {
            "seconds": round(ours_s, 1),
            **score(pairs_of([(m.canonical, m.index) for m in matches]), truth),
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, params in CONFIGS.items():
            seconds, predicted = run_datatrove(texts, Path(tmp), *params)
            result[name] = {
                "seconds": seconds,
                "time_ratio_datatrove_over_ours": round(seconds / ours_s, 2),
                **score(predicted, truth),
            }
    save(f"datatrove_{args.records}", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
