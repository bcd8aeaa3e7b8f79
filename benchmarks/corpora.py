"""Readers for the real abstracts in ../shared/corpora (read at run time, never copied here).

``load_pools()`` returns {language: [abstract, ...]}: plain abstracts (no markup characters), within
the length range of a real abstract, exact repeats removed, in a fixed order.
"""

from __future__ import annotations

import csv
import html
import json
import re
import xml.etree.ElementTree as ET

from benchmarks.common import SHARED

CORPORA = SHARED / "corpora"
_MARKUP = re.compile(r"[\\$<>{}_^*#~]|&[a-z]+;")
_CJK = {"zh", "ja"}


def _jsonl_sentences(folder: str, field: str) -> list[str]:
    """Abstracts stored as a list of sentences in ``field`` of every line of every .jsonl file."""
    out = []
    for path in sorted((CORPORA / folder).glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            out.append(" ".join(json.loads(line)[field]))
    return out


def _csl() -> list[str]:
    out = []
    for path in sorted((CORPORA / "csl").glob("*.tsv")):
        for row in path.read_text("utf-8").splitlines():
            parts = row.split("\t")
            if len(parts) >= 2:
                out.append(parts[1].strip())
    return out


def _jp() -> list[str]:
    out = []
    with open(CORPORA / "jp_nlp_journal" / "test.csv", encoding="utf-8-sig", newline="") as fh:
        for row in csv.DictReader(fh):
            text = re.sub(r"\s*\n\s*", "", row.get("jabstract") or "")  # hard-wrapped: join CJK lines
            out.append(text.strip())
    return out


def _taln() -> list[str]:
    out = []
    for path in sorted((CORPORA / "taln_archives").glob("*.xml")):
        for m in re.finditer(r"<resume>(.*?)</resume>", path.read_text("utf-8"), re.S):
            out.append(html.unescape(re.sub(r"\s+", " ", m.group(1))).strip())
    return out


def _scielo(prefix: str) -> list[str]:
    out = []
    for path in sorted((CORPORA / "scielo").glob(f"{prefix}-*.xml")):
        root = ET.parse(path).getroot()
        for passage in root.iter("passage"):
            infons = {i.get("key"): i.text for i in passage.findall("infon")}
            if infons.get("section") == "abstract":
                out.append(" ".join((s.findtext("text") or "").strip() for s in passage.findall("sentence")))
    return out


def _tibkat() -> list[str]:
    path = CORPORA / "tibkat_de" / "de_abstracts.jsonl"
    return [json.loads(line)["abstract"] for line in path.read_text("utf-8").splitlines() if line.strip()]


def load_all() -> dict[str, list[str]]:
    """Every text of every corpus, by language, as stored (markup, repeats and odd lengths included)."""
    return {
        "en": _jsonl_sentences("scitldr", "source") + _jsonl_sentences("csabstruct", "sentences"),
        "zh": _csl(),
        "ja": _jp(),
        "fr": _taln(),
        "es": _scielo("es"),
        "pt": _scielo("pt"),
        "de": _tibkat(),
    }


def load_pools(include_markup: bool = False) -> dict[str, list[str]]:
    pools = {}
    for lang, texts in load_all().items():
        lo, hi = (80, 1100) if lang in _CJK else (350, 2000)
        seen, keep = set(), []
        for t in texts:
            t = re.sub(r"\s+", " ", t).strip() if lang not in _CJK else t.strip()
            if not (lo <= len(t) <= hi) or t in seen or (not include_markup and _MARKUP.search(t)):
                continue
            seen.add(t)
            keep.append(t)
        pools[lang] = keep
    return pools


if __name__ == "__main__":
    for lang, texts in load_pools().items():
        print(lang, len(texts))
