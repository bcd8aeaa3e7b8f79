"""Near-duplicate detection at scale: LSH + verification + clustering over N records, time and memory.

Records are made from the real pool abstracts (../shared/corpora, read at run time, all 7 languages in
their pool proportions): 90% are distinct documents, each made of sentences drawn at random from the
pool abstracts of one language up to the length of a random real abstract of it, with 10% of its
tokens replaced (new documents on the same topics, the way a large corpus looks: they fill the index
and bring the LSH false positives of shared domain vocabulary); 10% carry 0-10% edits of an earlier
record (duplicates to find). Reports records/s and peak RSS before and after the dedup step.

    .venv/bin/python -m benchmarks.bench_dedup_scale [--records 1000000] [--signed] [--max-threads N]

``--signed`` signs the texts and marks the CJK ones first, untimed, as the per-file stage does in a run,
and times what the flow's dedup step does with both given: the band search and the verification.
``--max-threads`` caps the band search's threads and the verifying processes (``lsh.MAX_BAND_THREADS``;
1: one core).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time

from benchmarks.bench_dedup import CJK, edit, sentences
from benchmarks.common import peak_rss_mb, save
from benchmarks.corpora import load_pools
from checks import load_policy
from corpus_hygiene.dedup import lsh
from corpus_hygiene.dedup.near import find_near_duplicates
from corpus_hygiene.dedup.signatures import signature_of

_CJK_CLAUSE = re.compile(r"(?<=[。！？；，、.!?;,])")


class Maker:
    """New, distinct abstracts from the pools: sentences of one language's real abstracts drawn at
    random up to the length of a random real abstract of it, then 10% of the tokens replaced."""

    def __init__(self, pools: dict[str, list[str]]) -> None:
        self.pools = pools
        self.langs = sorted(pools)
        self.weights = [len(pools[lang]) for lang in self.langs]
        self.sents = {lang: [s for t in pools[lang] for s in self._pieces(t, lang)] for lang in self.langs}
        self.vocab = {
            lang: [w for t in pools[lang][:500] for w in (t if lang in CJK else t.split(" "))]
            for lang in self.langs
        }

    @staticmethod
    def _pieces(text: str, lang: str) -> list[str]:
        """Sentences; clauses for Chinese/Japanese, whose pool abstracts often end sentences with "."
        (a whole abstract would otherwise be one "sentence", and new documents would be copies)."""
        if lang in CJK:
            return [p for p in _CJK_CLAUSE.split(text) if p.strip()]
        return sentences(text, lang)

    def language(self, rng: random.Random) -> str:
        return rng.choices(self.langs, self.weights)[0]

    def abstract(self, lang: str, rng: random.Random) -> str:
        target = len(rng.choice(self.pools[lang]))
        parts: list[str] = []
        while sum(map(len, parts)) < target:
            parts.append(rng.choice(self.sents[lang]))
        return edit(("" if lang in CJK else " ").join(parts), lang, 0.10, rng, self.vocab[lang])

    def near_copy(self, text: str, lang: str, rng: random.Random, rate: float) -> str:
        return edit(text, lang, rate, rng, self.vocab[lang])


def build(n: int, rng: random.Random) -> tuple[list[str], int]:
    maker = Maker(load_pools())
    texts: list[str] = []
    lang_of: list[str] = []
    planted = 0
    for i in range(n):
        if i > 1000 and rng.random() < 0.10:
            j = rng.randrange(i)
            texts.append(maker.near_copy(texts[j], lang_of[j], rng, rng.uniform(0.0, 0.10)))
            lang_of.append(lang_of[j])
            planted += 1
            continue
        lang = maker.language(rng)
        texts.append(maker.abstract(lang, rng))
        lang_of.append(lang)
    return texts, planted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument(
        "--signed", action="store_true", help="sign first (untimed), as a run's per-file stage"
    )
    parser.add_argument("--max-threads", type=int, default=None, help="cap of band threads and verifiers")
    args = parser.parse_args()
    if args.max_threads:
        lsh.MAX_BAND_THREADS = args.max_threads
    rng = random.Random(3)
    texts, planted = build(args.records, rng)
    config = load_policy().dedup_config()
    signatures = [signature_of(t, config) for t in texts] if args.signed else []
    cjk = lsh.cjk_mask(texts) if args.signed else None  # a run's records carry it (their language)
    rss_before = peak_rss_mb()
    start = time.perf_counter()
    matches = find_near_duplicates(texts, config, signatures, cjk)
    secs = time.perf_counter() - start
    save(
        f"dedup_scale_{args.records}"
        + ("_signed" if args.signed else "")
        + (f"_t{args.max_threads}" if args.max_threads else ""),
        {
            "records": args.records,
            "signed_before": args.signed,
            "band_threads": lsh.band_threads(),
            "planted_near_duplicates": planted,
            "found": len(matches),
            "seconds": round(secs, 1),
            "records_per_s": round(args.records / secs),
            "peak_rss_mb_before_dedup": rss_before,
            "peak_rss_mb": peak_rss_mb(),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
