"""A corpus made to stress the report's layout: one file 40 folders deep, long file names, long URLs,
Chinese and Arabic (right to left), exact and near copies, placeholders; 2,000 records in 30 files.
Every word list here is written for this project."""

import random
from pathlib import Path

EN = (
    "model data learning graph retrieval benchmark training noise annotation transformer sparse attention "
    "encoder decoder corpus evaluation robust latent diffusion policy agent reward language vision speech "
    "parser alignment summary translation question answer retrieval memory cache kernel gradient "
    "the the of of and and a a to in we that is for on with"
).split()
ZH = list("我们提出一种新的方法用于图神经网络训练并在多个数据集上验证其有效性结果表明该模型优于现有基线")
AR = "نقترح طريقة جديدة لتدريب النماذج اللغوية على بيانات قليلة ونظهر أنها تتفوق على الطرق السابقة".split()


def sentence(rng, words, n):
    return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."


def abstract(rng, lang):
    if lang == "zh":
        return "".join("".join(rng.choice(ZH) for _ in range(rng.randint(20, 40))) + "。" for _ in range(4))
    if lang == "ar":
        return " ".join(sentence(rng, AR, rng.randint(8, 14)) for _ in range(4))
    text = " ".join(sentence(rng, EN, rng.randint(10, 18)) for _ in range(5))
    if rng.random() < 0.2:
        text += " Code: https://example.org/" + "a-very-long-path-segment-" * 8 + "end"
    return text


def build(root: Path, records: int = 2000, files: int = 30) -> None:
    """Write the corpus under ``root`` (deterministic: the same bytes every time)."""
    rng = random.Random(31)
    deep = Path(*[f"level{i:02d}" for i in range(40)])
    names = [
        f"proceedings_of_the_international_conference_number_{i}_with_a_very_long_file_name_{'x' * 40}.txt"
        for i in range(files)
    ]
    per = records // files
    kept_texts = []
    for i, name in enumerate(names):
        folder = root / (deep if i == 0 else Path(f"venue{i % 5}"))
        folder.mkdir(parents=True, exist_ok=True)
        lang = ("en", "zh", "ar")[i % 3]
        paras = []
        for _ in range(per + (records % files if i == files - 1 else 0)):
            r = rng.random()
            if kept_texts and r < 0.08:
                paras.append(rng.choice(kept_texts))  # exact copy
            elif kept_texts and r < 0.14:
                t = rng.choice(kept_texts).split(" ")
                t[rng.randrange(len(t))] = "changed"
                paras.append(" ".join(t))  # near copy
            elif r < 0.17:
                paras.append("TBA")
            else:
                t = abstract(rng, lang)
                kept_texts.append(t)
                paras.append(t)
        header = {"en": "ICLR 2026 Papers", "zh": "ICLR 2026 论文列表", "ar": "ICLR 2026 قائمة الأوراق"}[lang]
        (folder / name).write_text(header + "\n\n" + "\n\n".join(paras) + "\n", "utf-8")
