"""Dedup and language identification, measured on a labelled dev set built from real abstracts.

The dev set (seeded, rebuilt at run time from ../shared/corpora; nothing is copied into the project):
- bases: real abstracts in 7 languages (benchmarks/corpora.py);
- exact variants of a base: case, extra whitespace and line breaks, NFD accents, full-width letters,
  no-break spaces, zero-width spaces, ligatures, LaTeX accents, mojibake — must all be found (100%);
- near variants: word (space-delimited) or character (zh/ja) substitutions, insertions and deletions
  at 5–25% of tokens, a swap of two sentences, an appended "code is available at …" sentence;
- hard negatives: a different abstract whose first one or two sentences are copied from a base (must
  never be merged with it); other abstracts of the same pool act as same-topic negatives.
Reports pairwise precision/recall/F1 per language and per edit-rate bucket for each config tried, merges
of distinct abstracts, language accuracy per language (and zh↔ja confusions), and speeds.

    .venv/bin/python -m benchmarks.bench_dedup [--bases 300]
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from dataclasses import replace

from benchmarks.common import SHARED, peak_rss_mb, save
from benchmarks.corpora import load_pools
from checks import load_policy
from corpus_hygiene.clean import clean_text
from corpus_hygiene.dedup.config import DedupConfig
from corpus_hygiene.dedup.deduplicate import deduplicate
from corpus_hygiene.dedup.keys import dedup_key, record_id
from corpus_hygiene.dedup.minhash import Signer
from corpus_hygiene.dedup.shingles import shingles
from corpus_hygiene.language.detect import detect_language
from corpus_hygiene.models import Record

CJK = {"zh", "ja"}
BUCKETS = ["0-5%", "5-10%", "10-15%", "15-20%", "20-25%", "swap", "append"]
APPEND = {
    "en": "Code is available at https://github.com/anon/project.",
    "fr": "Le code est disponible en ligne.",
    "es": "El código está disponible en línea.",
    "pt": "O código está disponível online.",
    "de": "Der Code ist online verfügbar.",
    "zh": "代码已在网上公开。",
    "ja": "コードは公開されている。",
}
_SENT = {"cjk": re.compile(r"(?<=[。！？])"), "latin": re.compile(r"(?<=[.!?])\s+")}


def sentences(text: str, lang: str) -> list[str]:
    parts = _SENT["cjk" if lang in CJK else "latin"].split(text)
    return [p for p in parts if p.strip()]


def join(parts: list[str], lang: str) -> str:
    return ("" if lang in CJK else " ").join(parts)


def edit(text: str, lang: str, rate: float, rng: random.Random, vocab: list[str]) -> str:
    tokens = list(text) if lang in CJK else text.split(" ")
    for _ in range(max(1, round(rate * len(tokens)))):
        op = rng.choice(("sub", "ins", "del"))
        i = rng.randrange(len(tokens))
        if op == "sub":
            tokens[i] = rng.choice(vocab)
        elif op == "ins":
            tokens.insert(i, rng.choice(vocab))
        elif len(tokens) > 10:
            del tokens[i]
    return ("" if lang in CJK else " ").join(tokens)


def exact_variant(text: str, kind: str) -> str:
    if kind == "case":
        return text.upper()
    if kind == "whitespace":
        return "  " + text.replace(" ", "  ").replace("。", "。\n") + "\n"
    if kind == "nfd":
        return unicodedata.normalize("NFD", text)
    if kind == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    if kind == "nbsp":
        return text.replace(" ", "\u00a0")
    if kind == "zero_width":
        return text.replace("e", "e\u200b").replace("の", "の\u200b").replace("的", "的\u200b")
    if kind == "ligature":
        return text.replace("fi", "ﬁ").replace("fl", "ﬂ")
    if kind == "latex_accents":
        return text.replace("é", "\\'e").replace("è", "\\`e").replace("ü", '\\"u').replace("ç", "\\c{c}")
    if kind == "mojibake":  # as most tools make it: cp1252's five undefined bytes pass through as latin-1
        return "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in text.encode("utf-8"))
    raise ValueError(kind)


EXACT_KINDS = [
    "case",
    "whitespace",
    "nfd",
    "fullwidth",
    "nbsp",
    "zero_width",
    "ligature",
    "latex_accents",
    "mojibake",
]


def build_devset(pools: dict[str, list[str]], n_bases: int, seed: int = 7):
    """Return docs [(doc_id, lang, cluster, bucket, text)]; bucket is None for bases and negatives."""
    rng = random.Random(seed)
    docs = []
    per_lang = {
        "en": n_bases,
        "zh": n_bases * 2 // 3,
        "ja": n_bases // 2,
        "fr": n_bases // 2,
        "es": n_bases // 3,
        "pt": n_bases // 4,
        "de": 10,
    }
    cluster = 0
    for lang, pool in pools.items():
        pool = list(pool)
        rng.shuffle(pool)
        k = min(per_lang[lang], len(pool) // 2)
        bases, donors = pool[:k], pool[k:]
        vocab = [c for t in bases for c in t] if lang in CJK else [w for t in bases for w in t.split(" ")]
        for b_i, base in enumerate(bases):
            cluster += 1
            docs.append((lang, cluster, None, base))
            kind = EXACT_KINDS[b_i % len(EXACT_KINDS)]
            if not (lang in CJK and kind in ("case", "ligature", "latex_accents")):
                docs.append((lang, cluster, f"exact:{kind}", exact_variant(base, kind)))
            for _ in range(2):
                pick = rng.random()
                if pick < 0.7:
                    rate = rng.uniform(0.01, 0.25)
                    bucket = BUCKETS[min(4, int(rate * 20))]
                    docs.append((lang, cluster, bucket, edit(base, lang, rate, rng, vocab)))
                elif pick < 0.85:
                    sents = sentences(base, lang)
                    if len(sents) >= 3:
                        i = rng.randrange(len(sents) - 1)
                        sents[i], sents[i + 1] = sents[i + 1], sents[i]
                        docs.append((lang, cluster, "swap", join(sents, lang)))
                else:
                    docs.append((lang, cluster, "append", join([base, APPEND[lang]], lang)))
            # hard negative: another abstract that opens with this base's first 1-2 sentences
            if donors and b_i % 3 == 0:
                opening = sentences(base, lang)[: rng.choice((1, 2))]
                donor = sentences(donors.pop(), lang)
                if len(donor) >= 3 and len(opening) < len(sentences(base, lang)):
                    cluster += 1
                    docs.append(
                        (lang, cluster, "shared_opening", join(opening + donor[len(opening) :], lang))
                    )
    return [(f"doc{i:05d}", *d) for i, d in enumerate(docs)]


def to_records(docs) -> list[Record]:
    records = []
    for doc_id, lang, _, _, text in docs:
        c = clean_text(text, lang)
        records.append(
            Record(
                doc_id,
                1,
                None,
                None,
                "",
                lang,
                c.text,
                text,
                lang,
                1.0,
                c.fixes,
                record_id(dedup_key(c.text)),
            )
        )
    return records


def evaluate(docs, records, config: DedupConfig) -> dict:
    start = time.perf_counter()
    kept, dups, _ = deduplicate(records, config)
    secs = time.perf_counter() - start
    pred = {r.source_file: r.source_file for r in kept}
    pred.update({d.record.source_file: d.canonical.source_file for d in dups})
    info = {doc_id: (lang, cl, bucket) for doc_id, lang, cl, bucket, _ in docs}
    by_true, by_pred = defaultdict(list), defaultdict(list)
    for doc_id, (_, cl, _) in info.items():
        by_true[cl].append(doc_id)
        by_pred[pred[doc_id]].append(doc_id)
    true_pairs = {frozenset(p) for g in by_true.values() for p in itertools.combinations(g, 2)}
    pred_pairs = {frozenset(p) for g in by_pred.values() for p in itertools.combinations(g, 2)}

    def prf(tp, npred, ntrue):
        p = tp / npred if npred else 1.0
        r = tp / ntrue if ntrue else 1.0
        return {
            "precision": round(p, 4),
            "recall": round(r, 4),
            "f1": round(2 * p * r / (p + r), 4) if p + r else 0,
        }

    out = {
        "seconds": round(secs, 2),
        "overall": prf(len(true_pairs & pred_pairs), len(pred_pairs), len(true_pairs)),
    }
    lang_of = lambda pair: info[next(iter(pair))][0]  # noqa: E731
    out["per_language"] = {}
    for lang in sorted({v[0] for v in info.values()}):
        t = {p for p in true_pairs if lang_of(p) == lang}
        pr = {p for p in pred_pairs if lang_of(p) == lang}
        out["per_language"][lang] = prf(len(t & pr), len(pr), len(t))
    # recall of (base, variant) pairs per edit bucket; exact variants separately
    base_of = {cl: d for d, (_, cl, b) in info.items() if b is None}
    found, total = Counter(), Counter()
    for d, (lang, cl, bucket) in info.items():
        if bucket is None or bucket == "shared_opening":
            continue
        key = "exact" if bucket.startswith("exact") else bucket
        key_lang = f"{key}/{'cjk' if lang in CJK else 'words'}"
        for k in (key, key_lang):
            total[k] += 1
            found[k] += pred[d] == pred[base_of[cl]]
    out["recall_by_bucket"] = {k: f"{found[k] / total[k]:.3f} ({found[k]}/{total[k]})" for k in sorted(total)}
    wrong = [p for p in pred_pairs - true_pairs]
    shared = sum(1 for p in wrong if any(info[d][2] == "shared_opening" for d in p))
    out["merges_of_distinct_abstracts"] = len(wrong)
    out["of_which_shared_opening"] = shared
    return out


def language_accuracy(pools, n: int, rng: random.Random) -> dict:
    per, confusion = {}, Counter()
    start, calls = time.perf_counter(), 0
    for lang, pool in pools.items():
        sample = rng.sample(pool, min(n, len(pool)))
        ok = 0
        for text in sample:
            got = detect_language(text).code
            calls += 1
            ok += got == lang
            if got != lang:
                confusion[f"{lang}->{got}"] += 1
        per[lang] = f"{ok / len(sample):.4f} ({ok}/{len(sample)})"
    total_ok = sum(int(v.split("(")[1].split("/")[0]) for v in per.values())
    total_n = sum(int(v.split("/")[1].rstrip(")")) for v in per.values())
    return {
        "per_language": per,
        "overall": round(total_ok / total_n, 4),
        "confusions": dict(confusion),
        "abstracts_per_s": round(calls / (time.perf_counter() - start)),
    }


def prefix_sweep(pools, rng: random.Random) -> dict:
    import corpus_hygiene.language.detect as L

    sample = [
        (lang, t)
        for lang in ("en", "fr", "es", "pt", "de")
        for t in rng.sample(pools[lang], min(60, len(pools[lang])))
    ]
    out, original = {}, L.PREFIX_CHARS
    try:
        for prefix in (50, 100, 150, 200, 300, 500):
            L.PREFIX_CHARS = prefix
            start = time.perf_counter()
            ok = sum(detect_language(t).code == lang for lang, t in sample)
            out[str(prefix)] = {
                "accuracy": round(ok / len(sample), 4),
                "abstracts_per_s": round(len(sample) / (time.perf_counter() - start)),
            }
    finally:
        L.PREFIX_CHARS = original
    return out


def signature_speed(records, config: DedupConfig) -> dict:
    signer = Signer(config)
    texts = [r.text for r in records]
    start = time.perf_counter()
    sets = [shingles(t, config.lsh_word_ngram, config.lsh_char_ngram) for t in texts]
    mid = time.perf_counter()
    for s in sets:
        signer.sign(s)
    end = time.perf_counter()
    return {
        "shingling_per_s": round(len(texts) / (mid - start)),
        "signing_per_s": round(len(texts) / (end - mid)),
        "shingle_and_sign_per_s": round(len(texts) / (end - start)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bases", type=int, default=300, help="English bases; other languages scale from it")
    args = parser.parse_args()
    if not (SHARED / "corpora").is_dir():
        print("benchmark needs ../shared/corpora", file=sys.stderr)
        return 2
    pools = load_pools()
    docs = build_devset(pools, args.bases)
    records = to_records(docs)
    base = load_policy().dedup_config()  # the product's configuration, from checks/policy.toml
    configs = {
        "policy (checks/policy.toml)": base,
        "LSH keeps common words": replace(base, lsh_skip_common=0),
        "LSH skips 50 common words": replace(base, lsh_skip_common=50),
        "LSH skips 200 common words": replace(base, lsh_skip_common=200),
        "alignment for any Jaccard": replace(base, alignment_floor=0.0),
        "candidates from estimate 0.5": replace(base, min_candidate_jaccard=0.5),
        "candidates from estimate 0.6": replace(base, min_candidate_jaccard=0.6),
        "CJK candidates from estimate 0.4": replace(base, min_candidate_jaccard_cjk=0.4),
        "CJK candidates from estimate 0.7": replace(base, min_candidate_jaccard_cjk=0.7),
        "alignment from Jaccard 0.2": replace(base, alignment_floor=0.2),
        "alignment from Jaccard 0.3": replace(base, alignment_floor=0.3),
        "verified >= 0.75": replace(base, threshold=0.75),
        "verified >= 0.80": replace(base, threshold=0.80),
        "LSH on bigrams (w2/c2)": replace(
            base, lsh_word_ngram=2, lsh_char_ngram=2, min_candidate_jaccard=0.3, min_candidate_jaccard_cjk=0.3
        ),
        "Jaccard only (bigrams >= 0.5, no alignment)": replace(base, threshold=0.5, alignment=False),
    }
    result = {
        "devset": {
            "docs": len(docs),
            "per_language": dict(Counter(d[1] for d in docs)),
            "buckets": dict(Counter(d[3] or "base" for d in docs)),
        },
        "configs": {name: evaluate(docs, records, cfg) for name, cfg in configs.items()},
        "signatures": signature_speed(records, base),
        "language": language_accuracy(pools, 200, random.Random(3)),
        "langdetect_prefix": prefix_sweep(pools, random.Random(4)),
        "peak_rss_mb": peak_rss_mb(),
    }
    save("dedup", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
