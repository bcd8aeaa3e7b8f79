"""Write the sample corpus in examples/corpus/ (all text written for this project).

Each file shows kinds of input the product handles; the comment above each one says which.
Run: python examples/make_corpus.py   (the files are committed; this script documents how they
were made and reproduces them byte for byte.)
"""

from __future__ import annotations

import random
from pathlib import Path

OUT = Path(__file__).with_name("corpus")

EN_1 = (
    "We present \\textbf{TideNet}, a recurrent architecture for forecasting coastal water levels from sparse "
    "tide-gauge records. Existing models treat each gauge independently and ignore the physical coupling "
    "between neighbouring stations. TideNet learns a graph over stations and propagates hidden states along "
    "its edges at every step. On three public benchmarks it reduces the 24-hour error by 18\\% relative to "
    "the strongest baseline, and it remains stable when up to half of the gauges are missing. We release "
    "code and data at \\url{https://example.org/tidenet}."
)
EN_2 = (
    "Large language models are increasingly used to grade student essays, yet their scores drift when the "
    "prompt wording changes. We study this sensitivity across $12$ prompt templates and $4$ model families, "
    "and find that the variance of scores grows with essay length. We propose **anchored grading**, which "
    "shows the model two reference essays with known scores before each judgement. Anchored grading halves "
    "the variance across templates and improves agreement with human raters from 0.61 to 0.74 without any "
    "fine-tuning."
)
EN_3 = (
    "Sparse mixture-of-experts layers route each token to a few experts, but the router is trained with a "
    "heuristic load-balancing loss whose weight must be tuned by hand. We replace it with a closed-form "
    "assignment based on optimal transport with entropy $\\varepsilon$, computed in $O(n \\log n)$ time per "
    "batch. The resulting models train without any balancing hyper-parameter, use all experts evenly, and "
    "match or exceed the perplexity of tuned baselines at 1.3B and 7B parameters."
)
# Mojibake: UTF-8 bytes of curly quotes read as cp1252 by an earlier tool ("’" → "â€™").
EN_4_CLEAN = (
    "Annotators’ disagreement is usually treated as noise to be averaged away. We argue that it carries "
    "signal about the task’s ambiguity, and we collect a dataset of 9,000 sentences where every item has "
    "five independent labels and a free-text rationale. Models trained to predict the full label "
    "distribution are better calibrated and flag “hard” items that experts later confirm as ambiguous."
)


def mojibake(text: str) -> str:
    """UTF-8 bytes read as Windows-1252; its five undefined bytes pass through as latin-1."""
    return "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in text.encode("utf-8"))


EN_4_MOJIBAKE = mojibake(EN_4_CLEAN)
EN_5 = (
    "Retrieval-augmented generation systems fail silently when the retriever returns passages that are "
    "topical but do not contain the answer. We introduce a verifier that scores each passage for answer "
    "support before generation, trained only on synthetic negatives produced by masking the answer span. "
    "On four open-domain question answering benchmarks the verifier removes 41% of unsupported passages "
    "while discarding fewer than 3% of supporting ones, and end-to-end exact match rises by 2.8 points."
)
# A near duplicate of EN_5: a resubmission with a few words changed and a sentence appended.
EN_5_NEAR = (
    "Retrieval-augmented generation systems fail silently when the retriever returns passages that are "
    "on topic but do not contain the answer. We introduce a verifier that scores every passage for answer "
    "support before generation, trained only on synthetic negatives produced by masking the answer span. "
    "On four open-domain question answering benchmarks the verifier removes 41% of unsupported passages "
    "while discarding fewer than 3% of supporting ones, and end-to-end exact match rises by 2.8 points. "
    "Code is available online."
)
# PDF-extraction artefacts: words split at line ends, a soft hyphen, a ligature, letter spacing.
EN_PDF = (
    "Document layout models are usually trained on born-digital files. We intro- duce a corpus of 40,000 "
    "scanned pages with noisy text layers and show that current models lose most of their accu- racy on "
    "them. A light\u00adweight correction step that uses the page image as well as the text recovers two "
    "thirds of the gap, and ﬁne-tuning on our data closes it for tables typeset with L A T EX."
)
EN_6 = (
    "Benchmarks for code generation measure whether a program passes unit tests, not whether it is "
    "maintainable. We collect 1,200 pull requests in which reviewers asked for changes to code that already "
    "passed its tests, and turn the review comments into checkable criteria. Current models satisfy 38% of "
    "these criteria on average; a simple self-review step raises this to 51%."
)

ZH_1 = (
    "针对低资源方言语音识别中标注数据稀缺的问题，本文提出一种基于自监督预训练与伪标签迭代的半监督方法。"
    "该方法首先在大规模无标注普通话与方言混合语音上进行预训练，然后利用少量标注数据微调，"
    "并通过置信度筛选生成伪标签逐轮扩充训练集。在三种方言的测试集上，字错误率相对基线平均降低了百分之二十一，"
    "且仅需原有标注量的十分之一即可达到全量监督模型的性能。"
)
ZH_2 = (
    "图神经网络在分子性质预测任务中表现突出，但其预测结果往往缺乏可解释性。"
    "本文设计了一种子结构注意力机制，能够在预测的同时给出对结果贡献最大的化学官能团。"
    "在四个公开数据集上的实验表明，该方法在保持预测精度的同时，所识别的关键子结构与化学专家的判断高度一致。"
)
# Near duplicate of ZH_2: a few characters changed and one clause reworded.
ZH_2_NEAR = (
    "图神经网络在分子性质预测任务中表现突出，但其预测结果通常缺乏可解释性。"
    "本文设计了一种子结构注意力机制，能够在预测的同时指出对结果贡献最大的化学官能团。"
    "在四个公开数据集上的实验表明，该方法在保持预测精度的同时，所识别的关键子结构与化学专家的判断高度吻合。"
)
ZH_3 = (
    "现有的中文文本纠错模型多依赖人工构造的混淆集，难以覆盖真实场景中的错误类型。"
    "我们从在线教育平台收集了十二万条学生作文修改记录，构建了一个真实错误分布的数据集，"
    "并提出一种结合拼音与字形特征的纠错模型，在该数据集上的F1值比现有最好方法提高了六点三个百分点。"
)

JA_1 = (
    "本研究では、日本語の長文要約において重要な情報が文書の後半に現れる場合に、既存の要約モデルが"
    "それを見落としやすいことを示す。そこで、文書を段落単位に分割し、各段落の重要度を推定してから"
    "要約を生成する二段階の手法を提案する。新聞記事と学術論文の二つのデータセットで評価した結果、"
    "提案手法は後半に含まれる情報の再現率を大きく改善し、人手評価でも高い評価を得た。"
)
JA_2 = (
    "対話システムの応答が文脈に合っているかを自動で評価する指標は多数提案されているが、"
    "日本語の敬語や省略表現を考慮したものは少ない。本論文では、敬語の適切さと省略の復元可能性を"
    "明示的に扱う評価指標を提案し、約三千件の対話に対する人手評価との相関を調べた。"
    "提案指標は既存の指標よりも人手評価との相関が高いことを確認した。"
)

KO_1 = (
    "본 논문은 한국어 법률 문서에서 조항 간 참조 관계를 자동으로 추출하는 방법을 제안한다. "
    "기존 방법은 정규 표현식에 의존하여 다양한 표기 변형을 처리하지 못하였다. 우리는 사전 학습된 언어 모델에 "
    "구조 정보를 결합한 추출기를 설계하였으며, 새로 구축한 법령 데이터셋에서 F1 점수 0.91을 달성하였다."
)
EN_KO_FILE = (
    "We study how well multilingual encoders transfer to Korean legal text, a domain with long sentences and "
    "heavy use of Sino-Korean vocabulary. Continued pre-training on 2 GB of statutes improves clause "
    "classification by 6 points, while vocabulary extension alone brings no gain."
)

FR_1 = (
    "Nous présentons une méthode d’alignement de textes parallèles pour des langues peu dotées, fondée sur "
    "des plongements de phrases multilingues et une programmation dynamique tolérante aux omissions. "
    "Appliquée à un corpus de traductions bibliques en créole haïtien et en français, elle atteint une "
    "précision de 94 % et permet d’extraire plus de 30 000 paires de phrases « propres » pour entraîner "
    "des systèmes de traduction automatique."
)
FR_2 = (
    "La détection automatique des discours haineux en ligne repose souvent sur des données annotées en "
    "anglais. Nous évaluons le transfert de modèles multilingues vers le français sur un nouveau jeu de "
    "données de 8 000 commentaires annotés par trois annotatrices, et montrons que l’ajout de 500 exemples "
    "français suffit à réduire de moitié l’écart avec un modèle entièrement supervisé."
)

RU_1 = (
    "Мы исследуем устойчивость систем машинного перевода к опечаткам во входном тексте. Для этого мы "
    "собрали корпус из пяти тысяч предложений с естественными ошибками пользователей и показали, что "
    "качество перевода падает в среднем на семь пунктов BLEU. Обучение на данных с искусственным шумом "
    "сокращает это падение вдвое без потери качества на чистом тексте."
)
RU_2 = (
    "Предложен метод автоматического построения словаря терминов по корпусу научных статей на русском "
    "языке. Метод сочетает морфологический анализ с контекстными векторными представлениями и не требует "
    "размеченных данных; на трёх предметных областях точность извлечения терминов составила 0,87."
)

# Text macros whose argument must survive (\texttt, \mbox, \textsc), and literal dollars.
EN_MACROS = (
    "Serving a language model costs $3 and $4 per million tokens on the two clouds we measured, and a "
    "cache of repeated prompts saves \\$2 of every \\$10. We present \\texttt{PromptCache}, a "
    "\\mbox{prefix-aware} cache that keys entries by the \\textsc{Merkle} hash of the prompt's token "
    "blocks. On a week of production traffic it serves 38\\% of requests from memory and lowers the "
    "median latency from 410 to 120 milliseconds, for $100 of storage per day."
)
# Contact details inside an abstract (an address pasted from the paper's first page).
EN_CONTACT = (
    "We describe a public corpus of 12,000 transcribed voicemail messages in six languages, with speaker "
    "age and accent labels collected by consent. Baseline recognisers lose a third of their accuracy on "
    "the older speakers, which we trace to slower speech rather than vocabulary. Requests for access go to "
    "voice-corpus@example.org or by phone to +44 20 7946 0958."
)
# A list of keywords pasted where the abstract should be: no prose, few common words.
EN_KEYWORDS = (
    "Keywords: graph neural networks; link prediction; heterogeneous graphs; knowledge graph completion; "
    "contrastive pretraining; negative sampling; benchmark datasets; scalability; inductive inference"
)


def write(rel: str, text: str, encoding: str, newline: str = "\n", bom: bytes = b"") -> None:
    path = OUT / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bom + text.replace("\n", newline).encode(encoding))


def main() -> None:
    # UTF-8, no BOM, LF. English header. LaTeX, markdown, mojibake, junk records.
    write(
        "iclr_2026_papers.txt",
        "\n\n".join(["ICLR 2026 Papers", EN_1, EN_2, EN_3, EN_4_MOJIBAKE, "TBA", EN_5]) + "\n",
        "utf-8",
    )
    # GB18030, LF. Chinese header; Chinese near duplicate; a paragraph wrapped over two lines.
    zh_wrapped = ZH_3[:60] + "\n" + ZH_3[60:]
    write(
        "zh/iclr_2026_论文列表.txt",
        "\n\n".join(["ICLR 2026 论文列表", ZH_1, ZH_2, zh_wrapped, ZH_2_NEAR]) + "\n",
        "gb18030",
    )
    # UTF-16 with BOM, CRLF. Japanese header whose label has no kana ("論文一覧").
    write("ja/neurips_2025.txt", "\r\n\r\n".join(["NeurIPS 2025 論文一覧", JA_1, JA_2]) + "\r\n", "utf-16")
    # UTF-8 with BOM, CRLF. Korean header; a Korean and an English abstract; blank lines with spaces.
    write(
        "ko/acl_2024.txt",
        "ACL 2024 논문 목록\r\n   \r\n" + KO_1 + "\r\n\t\r\n\r\n" + EN_KO_FILE + "\r\n",
        "utf-8",
        bom=b"\xef\xbb\xbf",
    )
    # cp1252, CR-only line endings (classic Mac). French header; curly quotes are 0x91-0x94 here.
    write("fr/taln_2025.txt", "\r\r".join(["Liste des articles — TALN 2025", FR_1, FR_2]) + "\r", "cp1252")
    # UTF-8, Cyrillic header; a Chinese exact copy (different punctuation width and spacing).
    zh_copy = ZH_1.replace("，", ", ").replace("。", ". ")
    write("ru/emnlp_2025.txt", "\n\n".join(["Статьи EMNLP 2025", RU_1, RU_2, zh_copy]) + "\n", "utf-8")
    # Markdown, year before venue. Exact copies (case, whitespace, LaTeX-free) and a near duplicate.
    en_2_copy = EN_2.replace(". ", ".  ").upper()
    write(
        "aaai_2025_accepted.md",
        "\n\n".join(
            [
                "# 2025 AAAI accepted papers",
                EN_6,
                en_2_copy,
                EN_5_NEAR,
                "Abstract to appear.",
                EN_PDF,
                EN_4_CLEAN,  # the clean original of the mojibake copy in iclr_2026_papers.txt
                "* * *",
            ]
        )
        + "\n",
        "utf-8",
    )
    # UTF-8, LF. Text macros and literal dollars; an e-mail address and a phone number (counted in the pii
    # column, kept by the default policy); a keyword list (quarantined: stopword_share).
    write(
        "acl_2025.txt", "\n\n".join(["ACL 2025 Papers", EN_MACROS, EN_CONTACT, EN_KEYWORDS]) + "\n", "utf-8"
    )
    # No header: a file of notes someone dropped in the folder. Kept in quarantine, not lost.
    write(
        "notes/todo.txt",
        "remember to ask the organisers for the camera-ready versions of these abstracts "
        "before the deadline\n\n"
        "second batch still missing, check the shared drive and the mailing list archive next week\n",
        "utf-8",
    )
    # Unreadable: binary bytes with a .pdf name (a scan that cannot be read as text).
    rng = random.Random(42)
    data = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(rng.randrange(256) for _ in range(2048))
    (OUT / "scans").mkdir(parents=True, exist_ok=True)
    (OUT / "scans" / "proceedings_scan.pdf").write_bytes(data)


if __name__ == "__main__":
    main()
