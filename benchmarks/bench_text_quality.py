"""What cleaning loses and how the quality limits fall on real abstracts (../shared, read at run time).

For every text of ../shared/corpora (``corpora.load_all``: every corpus, nothing filtered) and every
seed abstract, in the language the pipeline detects for it: clean it, count the words the loss guard reports
(``clean.loss``) against the words that came in, compute its quality signals (``signals.py``) and
count, per language, the texts each limit of the policy's [quality] table would quarantine. The
policy's limits are chosen so that at most 0.2% of these texts fail any of them.

    .venv/bin/python -m benchmarks.bench_text_quality [--policy checks/policy.toml]
"""

from __future__ import annotations

import argparse
import sys
import time

import pandas as pd

from benchmarks.common import SEEDS, save, seed_files
from benchmarks.corpora import CORPORA, load_all
from checks import load_policy
from checks.domain import CHECKS_BY_NAME
from corpus_hygiene.clean import clean_text
from corpus_hygiene.language.detect import detect_language
from corpus_hygiene.signals import SIGNAL_COLUMNS, signals_of, words

SIGNAL_CHECKS = (
    "word_count",
    "mean_word_length",
    "alpha_share",
    "stopword_share",
    "repeated_ngrams",
    "url_count",
)
QUANTILES = (0.0, 0.001, 0.002, 0.01, 0.5, 0.99, 0.998, 0.999, 1.0)


def measure(pools: dict[str, list[str]], policy) -> dict:
    rows, lost_examples = [], []
    for corpus, texts in pools.items():
        for text in texts:
            lang = detect_language(text).code
            cleaned = clean_text(text, lang)
            s = signals_of(cleaned.text, lang)
            rows.append(
                {
                    "corpus": corpus,
                    "text": cleaned.text,
                    "lang": lang,
                    "n_chars": len(cleaned.text),
                    "words_in": len(words(text)),
                    "lost_words": cleaned.lost,
                    **s.columns(),
                }
            )
            if cleaned.lost and len(lost_examples) < 20:
                lost_examples.append({"corpus": corpus, "lost": list(cleaned.lost)})
    frame = pd.DataFrame(rows)
    frame["stopword_share"] = frame["stopword_share"].astype("Float64")
    params = policy.check_params()
    # Only texts a real run would keep reach the signal limits: length within the policy's range.
    abstracts = frame[frame["n_chars"].between(policy.min_chars, policy.max_chars)]
    fails = {}
    any_fail = pd.Series(False, index=abstracts.index)
    for name in SIGNAL_CHECKS:
        check = CHECKS_BY_NAME[name]
        failed = ~check.passes(abstracts, **{k: params[k] for k in check.params})
        any_fail |= failed
        fails[name] = {c: int(n) for c, n in failed.groupby(abstracts["corpus"]).sum().items()}
    signals = {}
    for name in SIGNAL_COLUMNS:
        signals[name] = {
            corpus: [round(float(v), 3) for v in group[name].dropna().astype(float).quantile(QUANTILES)]
            for corpus, group in abstracts.groupby("corpus")
        }
    return {
        "texts": len(frame),
        "words_in": int(frame["words_in"].sum()),
        "words_lost": int(frame["lost_words"].map(len).sum()),
        "records_losing_words": int((frame["lost_words"].map(len) > 0).sum()),
        "lost_examples": lost_examples,
        "abstracts_in_length_range": len(abstracts),
        "fail_any_quality_limit": int(any_fail.sum()),
        "fail_share": round(float(any_fail.mean()), 5),
        "fail_share_by_corpus": {
            c: round(float(v), 4) for c, v in any_fail.groupby(abstracts["corpus"]).mean().items()
        },
        "fails_by_limit": fails,
        "limits": {k: params[k] for k in policy.quality},
        "contacts": {
            kind: int(frame["pii"].map(lambda p, k=kind: p[k]).sum()) for kind in ("email", "phone")
        },
        "quantiles": list(QUANTILES),
        "signals_by_corpus": signals,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--policy", default=None)
    args = parser.parse_args()
    if not (CORPORA.is_dir() and SEEDS.is_dir()):
        print(f"benchmark needs {CORPORA} and {SEEDS}", file=sys.stderr)
        return 2
    pools = dict(load_all(), seeds=[p for _, paras in seed_files() for p in paras])
    start = time.perf_counter()
    result = measure(pools, load_policy(args.policy))
    result["seconds"] = round(time.perf_counter() - start, 1)
    save("text_quality", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
