"""The baseline of issue 57: the chain a competent user writes in an afternoon with the same libraries,
run side by side with `hygiene run --workers 1` (and `--workers 2`, for its wall) on the same corpora
(built as bench_e2e builds them).

Naive chain: charset_normalizer decode, the header line's year by regex, paragraphs on blank lines,
`ftfy.fix_text`, pylatexenc `LatexNodes2Text().latex_to_text` and seeded `langdetect.detect` on every
paragraph (2 processes), exact dedup on a normalised hash, datasketch MinHash (128 permutations, word
5-gram shingles, its default hash) with `MinHashLSH(threshold=0.7)`, first come kept, a pandera schema,
three Parquet tables. CPU is user+sys of the whole process tree (RUSAGE_CHILDREN of a subprocess); each
command runs ``--repeat`` times a size, interleaved, and the least CPU (and wall) counts.

    python -m benchmarks.bench_naive --sizes 5000 20000
"""

from __future__ import annotations

import argparse
import hashlib
import re
import resource
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pool
from pathlib import Path

from benchmarks.bench_e2e import build
from benchmarks.common import SHARED, save
from checks import DEFAULT_POLICY_PATH


def _per_file(path: str) -> list[dict]:
    import charset_normalizer
    import ftfy
    import langdetect
    from pylatexenc.latex2text import LatexNodes2Text

    langdetect.DetectorFactory.seed = 0
    text = str(charset_normalizer.from_bytes(Path(path).read_bytes()).best())
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    header, body = paragraphs[0], paragraphs[1:]
    year = re.search(r"\b(19|20)\d\d\b", header)
    rows = []
    for i, paragraph in enumerate(body):
        clean = LatexNodes2Text().latex_to_text(ftfy.fix_text(paragraph))
        try:
            lang = langdetect.detect(clean)
        except langdetect.LangDetectException:
            lang = "und"
        rows.append({"source_file": Path(path).name, "paragraph": i, "header": header,
                     "year": int(year.group()) if year else 0, "text": clean, "lang": lang})  # fmt: skip
    return rows


def naive(input_dir: Path, out: Path) -> None:
    import pandas as pd
    import pandera.pandas as pa
    from datasketch import MinHash, MinHashLSH

    with Pool(2) as pool:
        rows = [r for rows in pool.map(_per_file, sorted(map(str, input_dir.iterdir()))) for r in rows]
    kept, duplicates, seen = [], [], {}
    lsh = MinHashLSH(threshold=0.7, num_perm=128)
    for i, row in enumerate(rows):
        key = hashlib.sha1(" ".join(row["text"].lower().split()).encode()).hexdigest()
        if key in seen:
            duplicates.append({**row, "of": seen[key]})
            continue
        seen[key] = str(i)
        words = row["text"].lower().split()
        minhash = MinHash(num_perm=128)
        for j in range(max(1, len(words) - 4)):
            minhash.update(" ".join(words[j : j + 5]).encode())
        if near := lsh.query(minhash):
            duplicates.append({**row, "of": near[0]})
            continue
        lsh.insert(str(i), minhash)
        kept.append(row)
    schema = pa.DataFrameSchema({
        "text": pa.Column(str, pa.Check.str_length(min_value=20)),
        "year": pa.Column(int, pa.Check.in_range(1950, 2100)),
        "lang": pa.Column(str, pa.Check.str_length(2, 3)),
    })  # fmt: skip
    frame = pd.DataFrame(kept)
    try:
        schema.validate(frame, lazy=True)
        bad = pd.Series(False, index=frame.index)
    except pa.errors.SchemaErrors as errors:
        bad = frame.index.isin(errors.failure_cases["index"].dropna())
    out.mkdir(parents=True, exist_ok=True)
    frame[~bad].to_parquet(out / "records.parquet")
    frame[bad].to_parquet(out / "quarantine.parquet")
    pd.DataFrame(duplicates).to_parquet(out / "duplicates.parquet")


def _cpu(cmd: list[str]) -> tuple[float, float]:
    """(CPU seconds of the whole process tree, wall seconds) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return round(cpu, 1), round(time.perf_counter() - start, 1)


def _hygiene(corpus: Path, out: Path, workers: int) -> list[str]:
    hygiene = str(Path(sys.executable).with_name("hygiene"))
    return [hygiene, "run", str(corpus), "--dataset-dir", f"{out}/clean", "--reports-dir", f"{out}/reports",
            "--workers", str(workers), "--policy", str(DEFAULT_POLICY_PATH)]  # fmt: skip


def _commands(corpus: Path, out: Path) -> dict[str, list[str]]:
    """The three commands of one repeat, each writing to its own folder under ``out``."""
    return {
        "naive": [sys.executable, "-m", "benchmarks.bench_naive", "--naive", str(corpus), str(out / "naive")],
        "hygiene_workers_1": _hygiene(corpus, out / "w1", 1),
        "hygiene_workers_2": _hygiene(corpus, out / "w2", 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each command a size; the least counts")
    parser.add_argument("--naive", nargs=2, metavar=("INPUT", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.naive:
        naive(Path(args.naive[0]), Path(args.naive[1]))
        return 0
    if not (SHARED / "corpora").is_dir():
        print("benchmark needs ../shared/corpora", file=sys.stderr)
        return 2
    results, every = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            corpus = Path(tmp) / f"in{n}"
            corpus.mkdir()
            build(corpus, n, 1, "f")
            runs: dict[str, list] = {}
            for r in range(args.repeat):  # interleaved: a slow spell of the machine falls on each alike
                for name, command in _commands(corpus, Path(tmp) / f"out{n}r{r}").items():
                    runs.setdefault(name, []).append(_cpu(command))
            every[n] = runs
            # the least of the repeats: noise on a shared machine only adds
            results[n] = {name: (min(c for c, _ in rs), min(w for _, w in rs)) for name, rs in runs.items()}
            print(n, results[n], flush=True)
    lo, hi = min(args.sizes), max(args.sizes)

    def per_record(name: str) -> float:
        return (results[hi][name][0] - results[lo][name][0]) / (hi - lo) * 1000

    slope = {name: round(per_record(name), 3) for name in ("naive", "hygiene_workers_1")}
    whole = results[hi]["naive"][0] / results[hi]["hygiene_workers_1"][0]
    walls = [results[hi][f"hygiene_workers_{w}"][1] for w in (1, 2)]
    save("naive", {
        "runs": {str(n): {k: {"cpu_seconds": c, "wall_seconds": w} for k, (c, w) in r.items()}
                 for n, r in results.items()},
        "repeats": {str(n): {k: [list(run) for run in rs] for k, rs in r.items()} for n, r in every.items()},
        "cpu_ms_per_record": slope,
        "per_record_ratio": round(slope["naive"] / slope["hygiene_workers_1"], 2),
        f"whole_run_cpu_ratio_at_{hi}": round(whole, 2),
        f"workers_2_wall_over_workers_1_at_{hi}": round(walls[1] / walls[0], 2),
    })  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
