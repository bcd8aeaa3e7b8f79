"""Write the sample reference examples/reference/benchmark_items.parquet (all text written for this
project): benchmark-style items a training corpus must not contain, the kind ``--reference`` checks a
run against (quarantine reason ``contaminated``).

Two items are reading-comprehension passages taken from abstracts of the sample corpus, as benchmarks
built from paper abstracts do: a run of ``examples/corpus`` with this reference quarantines the three
records that contain them (one abstract is there twice). The rest are questions no sample abstract contains.
Run: python examples/make_reference.py   (the file is committed; this reproduces it.)
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

OUT = Path(__file__).with_name("reference") / "benchmark_items.parquet"

PASSAGES = [
    # from examples/corpus/acl_2025.txt, second abstract
    "Baseline recognisers lose a third of their accuracy on the older speakers, which we trace to slower "
    "speech rather than vocabulary.",
    # from make_corpus.py's EN_2 (iclr_2026_papers.txt)
    "We study this sensitivity across 12 prompt templates and 4 model families, and find that the variance "
    "of scores grows with essay length.",
]
QUESTIONS = [
    "Which property of a graph neural network limits how far information can travel "
    "in a fixed number of layers?",
    "Why does a learning rate warm-up help the first steps of training a transformer "
    "with the Adam optimiser?",
    "What is the main cost of computing exact attention over a sequence of n tokens, in time and in memory?",
    "How does label smoothing change the calibration of a classifier trained with cross-entropy loss?",
    "Which evaluation metric rewards a summary for the word n-grams it shares with a "
    "human reference summary?",
    "What problem does batch normalisation address, and why does it behave differently at test time?",
    "When does early stopping act as a regulariser, and what quantity is monitored to decide when to stop?",
    "Which sampling method keeps the smallest set of tokens whose probabilities add up to a threshold p?",
    "Why do retrieval-augmented models hallucinate less on questions about facts that appear in their index?",
    "What does the perplexity of a language model on held-out text measure, and what are its units?",
    "How can a model's accuracy on a benchmark be inflated when test questions leak into its training data?",
    "Which tokenisation method merges the most frequent pair of symbols again and "
    "again to build a vocabulary?",
    "What is the difference between a model's aleatoric and its epistemic uncertainty about a prediction?",
    "Why does dropout at inference time give an estimate of a neural network's predictive uncertainty?",
    "Which optimisation method converges fastest on convex problems when only noisy gradients are available?",
    "How does contrastive pretraining use negative examples, and why do hard negatives make it learn faster?",
    "What makes k-means clustering sensitive to the initial choice of centroids, and "
    "how is it usually fixed?",
    "Why is the F1 score preferred over accuracy when one class is much rarer than the other in the data?",
    "Which property of the softmax function makes it unstable for large logits, and how is that avoided?",
    "How does beam search differ from greedy decoding, and why can a larger beam give worse translations?",
    "Quelle méthode d'alignement de phrases tolère les omissions dans un corpus parallèle peu doté ?",
    "¿Qué métrica mide la proporción de documentos relevantes entre los primeros "
    "diez resultados de búsqueda?",
    "Welche Eigenschaft eines neuronalen Netzes beschreibt die Anzahl der Schichten "
    "zwischen Eingabe und Ausgabe?",
    "大规模语言模型在哪些情况下会产生与事实不符的回答，如何通过检索增强来减少这种现象？",
    "ニューラル機械翻訳で低資源言語の翻訳品質を上げるために、どのようなデータ拡張の方法が使われるか。",
    "Какая функция потерь чаще всего используется при обучении языковых моделей "
    "предсказанию следующего слова?",
]


def main() -> None:
    items = PASSAGES + QUESTIONS
    table = pa.table(
        {
            "id": [f"passage-{i + 1}" for i in range(len(PASSAGES))]
            + [f"question-{i + 1}" for i in range(len(QUESTIONS))],
            "text": items,
        }
    )
    OUT.parent.mkdir(exist_ok=True)
    pq.write_table(table, OUT, compression="zstd")


if __name__ == "__main__":
    main()
