"""Record checks: junk rejected vs genuine abstracts kept, and the cost of validating 1M rows.

Genuine: every abstract of the pools in ../shared/corpora (7 languages, read at run time), plus the
first sentences of some as short (120-350 character) genuine abstracts. Junk: placeholders in seven
languages with case/punctuation/markup variants, stubs, markup- or punctuation-only text, URLs,
repeated filler. Each text goes the pipeline's way: clean → empty_text → the named checks.

    .venv/bin/python -m benchmarks.bench_checks [--rows 1000000]
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from benchmarks.common import SHARED, peak_rss_mb, save
from benchmarks.corpora import load_pools
from checks import load_policy
from checks.routing import candidate_frame, route
from corpus_hygiene.clean import clean_text
from corpus_hygiene.dedup.keys import dedup_key
from corpus_hygiene.language.detect import detect_language

PLACEHOLDERS = [
    "TBA",
    "TBD",
    "N/A",
    "Abstract to appear",
    "No abstract available",
    "No abstract provided",
    "Coming soon",
    "Abstract will be available soon",
    "To be announced",
    "See paper",
    "Lorem ipsum dolor sit amet",
    "Résumé à venir",
    "Pas de résumé",
    "Sin resumen",
    "Resumen no disponible",
    "Resumo não disponível",
    "Sem resumo",
    "Kein Abstract",
    "Zusammenfassung folgt",
    "暂无摘要",
    "摘要待定",
    "要旨なし",
    "準備中",
    "초록 없음",
    "Нет аннотации",
]
STUBS = [
    "---",
    "* * *",
    "$$",
    "\\textbf{}",
    "[no abstract]",
    "http://example.com/paper.pdf",
    "1234567890",
    "Deep Learning for Graphs",
    "See the PDF for details.",
    "(abstract missing)",
    "...",
    "Abstract:",
    "Untitled",
    "null",
    "None",
]
FILLER = ["test", "asdf", "lorem", "abstract", "text", "placeholder", "xxx", "foo bar"]


def junk(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.55:
            t = rng.choice(PLACEHOLDERS)
            t = rng.choice(
                [
                    t,
                    t.upper(),
                    t.lower(),
                    f"{t}.",
                    f"[{t}]",
                    f"**{t}**",
                    f"  {t} !",
                    f"\\emph{{{t}}}",
                    f"{t} ({rng.randint(2020, 2026)})",
                ]
            )
        elif kind < 0.8:
            t = rng.choice(STUBS)
        else:
            word = rng.choice(FILLER)
            t = " ".join([word] * rng.randint(25, 120))
        out.append(t)
    return out


def genuine(pools: dict[str, list[str]], rng: random.Random) -> list[tuple[str, str]]:
    out = [(lang, t) for lang, texts in pools.items() for t in texts]
    for lang, texts in pools.items():  # short genuine abstracts: an opening of 120-350 characters
        for t in rng.sample(texts, min(100, len(texts))):
            cut = t[:350]
            end = max(cut.rfind(". "), cut.rfind("。"))
            if end >= 120:
                out.append((lang, cut[: end + 1]))
    return out


def pipeline_verdicts(texts: list[str], policy) -> list[str | None]:
    """None = kept; else the reason, as the pipeline decides it for a paragraph."""
    rows, where, verdicts = [], [], [None] * len(texts)
    for i, t in enumerate(texts):
        c = clean_text(t, detect_language(t).code)
        if not dedup_key(c.text):
            verdicts[i] = "empty_text"
            continue
        lang = detect_language(c.text).code
        rows.append(
            {
                "text": c.text,
                "lang": lang,
                "year": 2026,
                "venue": "ICLR",
                "header_label": "Papers",
                "n_chars": len(c.text),
            }
        )
        where.append(i)
    for f in route(candidate_frame(rows), policy):
        verdicts[where[f.index]] = f.reason
    return verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    if not (SHARED / "corpora").is_dir():
        print("benchmark needs ../shared/corpora", file=sys.stderr)
        return 2
    rng = random.Random(11)
    policy = load_policy()
    pools = load_pools(include_markup=True)
    good = genuine(pools, rng)
    bad = junk(rng, 1500)
    good_verdicts = pipeline_verdicts([t for _, t in good], policy)
    bad_verdicts = pipeline_verdicts(bad, policy)
    wrongly_rejected = [(lang, t[:100], v) for (lang, t), v in zip(good, good_verdicts, strict=True) if v]
    missed = [t[:80] for t, v in zip(bad, bad_verdicts, strict=True) if v is None]
    by_lang = {}
    for (lang, _), v in zip(good, good_verdicts, strict=True):
        n, r = by_lang.get(lang, (0, 0))
        by_lang[lang] = (n + 1, r + (v is not None))

    # Validation cost: the named checks over a candidate frame of --rows rows (abstract-length texts).
    texts = [t for _, t in good]
    rows = [
        {
            "text": texts[i % len(texts)],
            "lang": "en",
            "year": 2026,
            "venue": "ICLR",
            "header_label": "Papers",
            "n_chars": len(texts[i % len(texts)]),
        }
        for i in range(args.rows)
    ]
    start = time.perf_counter()
    frame = candidate_frame(rows)
    built = time.perf_counter()
    failures = route(frame, policy)
    done = time.perf_counter()
    result = {
        "genuine": len(good),
        "genuine_rejected": len(wrongly_rejected),
        "genuine_rejected_share": round(len(wrongly_rejected) / len(good), 5),
        "genuine_rejected_by_language": {k: f"{r}/{n}" for k, (n, r) in sorted(by_lang.items())},
        "genuine_rejected_examples": wrongly_rejected[:10],
        "junk": len(bad),
        "junk_rejected_share": round(1 - len(missed) / len(bad), 4),
        "junk_missed_examples": missed[:10],
        "junk_reasons": {r: bad_verdicts.count(r) for r in sorted({v for v in bad_verdicts if v})},
        "validation_rows": args.rows,
        "validation_frame_seconds": round(built - start, 2),
        "validation_checks_seconds": round(done - built, 2),
        "validation_rows_per_s": round(args.rows / (done - built)),
        "validation_failures": len(failures),
        "peak_rss_mb": peak_rss_mb(),
    }
    save("checks", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
