"""Language identification on the UDHR in the 55 languages langdetect knows (../shared/lid/udhr): the
project's ``detect_language`` against seeded langdetect alone on the same texts, by length and by
language. tests/test_language.py asserts the targets on the same figures.

    python -m benchmarks.bench_language [--markdown]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from benchmarks.common import SHARED, save

UDHR = SHARED / "lid" / "udhr"
BUCKETS = ("< 50", "50–200", "> 200")
REQUIRED = ("zh", "ja", "ko", "de", "fr", "es", "pt", "ru", "ar", "it")


def udhr_texts() -> list[tuple[str, str]]:
    """(ISO 639-1 code, line) for every non-blank line; ``zh-cn``/``zh-tw`` are both ``zh``."""
    rows = []
    for path in sorted(UDHR.glob("*.txt")):
        code = path.stem.split("-")[0]
        rows += [(code, line.strip()) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return rows


def bucket(text: str) -> str:
    return BUCKETS[0] if len(text) < 50 else BUCKETS[1] if len(text) <= 200 else BUCKETS[2]


def seeded_langdetect(text: str) -> str:
    """langdetect as its README says to use it: seeded, ``detect`` (7 trials on the whole text)."""
    from langdetect import DetectorFactory, detect
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = 0
    try:
        return detect(text).split("-")[0]
    except LangDetectException:
        return "und"


def measure() -> dict:
    """Right answers per (language, bucket) for both detectors, and the project's time per text."""
    from corpus_hygiene.language.detect import detect_language

    cells: dict = defaultdict(lambda: {"texts": 0, "project": 0, "langdetect": 0})
    spent = 0.0
    for code, text in udhr_texts():
        start = time.perf_counter()
        ours = detect_language(text).code
        spent += time.perf_counter() - start
        cell = cells[(code, bucket(text))]
        cell["texts"] += 1
        cell["project"] += ours == code
        cell["langdetect"] += seeded_langdetect(text) == code
    texts = sum(c["texts"] for c in cells.values())
    return {"cells": dict(cells), "project_ms_per_text": round(spent * 1000 / texts, 3)}


def accuracy(cells: dict, keep=lambda code, b: True) -> dict:
    """{"texts", "project", "langdetect"} over the cells ``keep`` selects, as shares."""
    chosen = [c for (code, b), c in cells.items() if keep(code, b)]
    n = sum(c["texts"] for c in chosen)
    return {
        "texts": n,
        "project": round(sum(c["project"] for c in chosen) / n, 3),
        "langdetect": round(sum(c["langdetect"] for c in chosen) / n, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print the per-language table for docs")
    args = parser.parse_args()
    cells = measure()
    by_bucket = {b: accuracy(cells["cells"], lambda code, x, b=b: x == b) for b in BUCKETS}
    languages = sorted({code for code, _ in cells["cells"]})
    by_language = {
        lang: accuracy(cells["cells"], lambda code, x, lang=lang: code == lang) for lang in languages
    }

    result = {"by_length": by_bucket, "by_language": by_language, "ms_per_text": cells["project_ms_per_text"]}
    save("language_udhr", result)
    for b, row in by_bucket.items():
        print(f"{b:>7}  {row['texts']:5}  project {row['project']:.3f}  langdetect {row['langdetect']:.3f}")
    if args.markdown:
        print("| language | texts | project | langdetect |\n|---|---|---|---|")
        for lang, row in by_language.items():
            print(f"| {lang} | {row['texts']} | {row['project']:.3f} | {row['langdetect']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
