"""Render the run report (Jinja2, autoescaped: corpus text is data, never markup)."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import BaseModel, ConfigDict
from rapidfuzz.distance import Indel

from corpus_hygiene.atomic import json_document, write_atomic
from corpus_hygiene.language.scripts import CJK_CHARS
from corpus_hygiene.report.charts import bars
from corpus_hygiene.store.rows import StagedTable, columns

log = logging.getLogger(__name__)

_env = Environment(
    loader=PackageLoader("corpus_hygiene.report", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.globals["diff_segments"] = lambda before, after: diff_segments(before, after)
_env.globals["diff_words"] = lambda before, after: diff_words(before, after)

MAX_ROWS = 500  # rows per table in the page; the Parquet files hold everything
CONTEXT_CHARS = 80  # unchanged text shown around each change in a before/after excerpt
PATH_CHARS = 60  # paths longer than this are shortened in the middle

# The page's only script: filters the quarantine table. Allowed by its hash in the CSP, so no other
# script (say, one smuggled in through corpus text) could ever run, even if escaping failed.
FILTER_SCRIPT = """(function () {
  var box = document.getElementById("q-filter"), pick = document.getElementById("q-reason");
  var rows = document.querySelectorAll("#q-table tbody tr"), shown = document.getElementById("q-shown");
  function apply() {
    var text = box.value.toLowerCase(), reason = pick.value, n = 0;
    rows.forEach(function (row) {
      var ok = (!reason || row.dataset.reason === reason) && row.textContent.toLowerCase().indexOf(text) >= 0;
      row.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = String(n);
  }
  box.addEventListener("input", apply);
  pick.addEventListener("change", apply);
  apply();
})();"""
SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(FILTER_SCRIPT.encode()).digest()).decode()


def diff_segments(before: str, after: str) -> dict[str, list[tuple[bool, str]]]:
    """Split before/after texts into (changed?, text) runs so the page can highlight what changed,
    character by character (for the repair samples: which characters a fix changed).

    >>> diff_segments("naÃ¯ve model", "naïve model")["after"]
    [(False, 'na'), (True, 'ï'), (False, 've model')]
    """
    return _segments(list(before), list(after))


_WORDS = re.compile(f"[{CJK_CHARS}]|\\w+|\\s+|[^\\w\\s]")


def diff_words(before: str, after: str) -> dict[str, list[tuple[bool, str]]]:
    """``diff_segments`` by words (each CJK character one): for two near-duplicate abstracts, what was
    reworded (and faster than by characters).

    >>> diff_words("we train a small model", "we train a tiny model")["after"]
    [(False, 'we train a '), (True, 'tiny'), (False, ' model')]
    """
    a, b = _WORDS.findall(before), _WORDS.findall(after)
    # compared case-folded: an exact duplicate that differs in case shows no word as changed
    return _segments(a, b, [w.casefold() for w in a], [w.casefold() for w in b])


def _segments(
    a: list[str], b: list[str], key_a: list[str] | None = None, key_b: list[str] | None = None
) -> dict[str, list[tuple[bool, str]]]:
    # rapidfuzz's Indel opcodes: a longest common subsequence, so the fewest characters marked, and an
    # order of magnitude faster than difflib.SequenceMatcher on a large report
    old: list[tuple[bool, str]] = []
    new: list[tuple[bool, str]] = []
    for op, a0, a1, b0, b1 in Indel.opcodes(key_a or a, key_b or b):
        if a1 > a0:
            old.append((op != "equal", "".join(a[a0:a1])))
        if b1 > b0:
            new.append((op != "equal", "".join(b[b0:b1])))
    return {"before": old, "after": new}


def windowed(segments: list[tuple[bool, str]], context: int = CONTEXT_CHARS) -> list[tuple[bool, str]]:
    """The changed segments with ``context`` characters of unchanged text around each; longer unchanged
    runs are cut at a space and marked "…" (an excerpt never ends mid-word). Identical texts (one
    unchanged segment) show their opening.

    >>> windowed([(False, "one two three four five six"), (True, "7"), (False, " eight nine ten")], 10)
    [(False, '… five six'), (True, '7'), (False, ' eight nine ten')]
    >>> windowed([(False, "one two three four five six")], 5)
    [(False, 'one two …')]
    """
    if len(segments) == 1 and not segments[0][0] and len(segments[0][1]) > 2 * context:
        return [(False, segments[0][1][: 2 * context].rsplit(" ", 1)[0] + " …")]
    out = []
    for k, (changed, text) in enumerate(segments):
        if changed or len(text) <= 2 * context:
            out.append((changed, text))
            continue
        head = text[:context].rsplit(" ", 1)[0] + " …" if k > 0 else ""
        tail = "… " + text[-context:].split(" ", 1)[-1] if k < len(segments) - 1 else ""
        out.append((False, f"{head} {tail}".strip() if head and tail else head or tail or "…"))
    return out


def short_path(path: str, limit: int = PATH_CHARS) -> str:
    """``path`` shortened in the middle to about ``limit`` characters (the page shows the whole one on hover).

    >>> short_path("a/" * 40 + "file.txt", 20)
    'a/a/a/a/a…a/file.txt'
    """
    if len(path) <= limit:
        return path
    keep = limit - 1
    return path[: keep // 2] + "…" + path[len(path) - (keep - keep // 2) :]


_env.filters["windowed"] = windowed
_env.filters["short_path"] = short_path


def render_run_report(
    metrics: dict, quarantine: list[dict], duplicates: list[dict], records: StagedTable | tuple = ()
) -> str:
    shown = duplicates[:MAX_ROWS]
    wanted = {d["canonical_id"] for d in shown}
    canonical_texts = {  # a row's one column: ``records[i]`` would read every column of the row
        record_id: records.column("text_raw", lo + k, lo + k + 1)[0]
        for lo, (ids,) in columns(records, "record_id")
        for k, record_id in enumerate(ids)
        if record_id in wanted
    }
    return _env.get_template("run.html.j2").render(
        canonical_texts=canonical_texts,
        m=metrics,
        script=FILTER_SCRIPT,
        script_hash=SCRIPT_HASH,
        lang_bars=bars(metrics.get("languages", {})),
        funnel=bars({k: metrics["counts"][k] for k in ("ingested", "kept", "duplicates", "quarantined")}),
        quarantine=quarantine[:MAX_ROWS],
        duplicates=shown,
        max_rows=MAX_ROWS,
    )


class _Counts(BaseModel):
    model_config = ConfigDict(extra="allow")
    files: int
    ingested: int
    kept: int
    duplicates: int
    quarantined: int


class _IndexRow(BaseModel):
    """What the index reads of a ``<run_id>.metrics.json``: a file without it (foreign, damaged, from an
    older version) is skipped with one warning, never a failed run."""

    model_config = ConfigDict(extra="allow")
    run_id: str
    created_at: str
    outcome: str
    input_dir: str | None = None
    policy_sha256: str | None = None
    code_version: str | None = None
    counts: _Counts


def _past_runs(reports_dir: Path) -> list[dict]:
    """The runs this folder has metrics of, newest first."""
    runs, skipped = [], []
    for path in sorted(reports_dir.glob("*.metrics.json"), reverse=True):
        try:
            doc = json.loads(path.read_text("utf-8"))
            _IndexRow.model_validate(doc)
            if doc["run_id"] != path.name.removesuffix(".metrics.json"):
                raise ValueError("its run_id is not its name")
            runs.append(doc)
        except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            skipped.append(f"{path.name} ({type(exc).__name__})")
    if skipped:
        log.warning("the reports index skips files this tool cannot read: %s", ", ".join(skipped))
    return runs


def _render_index(reports_dir: Path) -> str:
    runs = _past_runs(reports_dir)
    return _env.get_template("index.html.j2").render(runs=runs, trend=trend_points(runs))


def trend_points(runs: list[dict], width: int = 600, height: int = 120) -> dict:
    """Kept / duplicate / quarantined records over the last 50 runs (oldest on the left) as polylines,
    the y axis's ticks, and a marker at each run whose policy or code differs from the run before."""
    series = list(reversed(runs[:50]))
    top = max((r["counts"][k] for r in series for k in ("kept", "duplicates", "quarantined")), default=0) or 1
    step = width / max(1, len(series) - 1)

    def y(value: float) -> float:
        return round(height - height * value / top, 1)

    def line(key: str) -> str:
        return " ".join(f"{i * step:.1f},{y(r['counts'][key])}" for i, r in enumerate(series))

    changes = []
    for i in range(1, len(series)):
        what = [
            label
            for label, key in (("policy", "policy_sha256"), ("code", "code_version"))
            if series[i].get(key) != series[i - 1].get(key)
        ]
        if what:
            changes.append(
                {
                    "x": round(i * step, 1),
                    "label": " and ".join(what) + " changed",
                    "run": series[i]["run_id"],
                }
            )
    return {
        "lines": {k: line(k) for k in ("kept", "duplicates", "quarantined")},
        "n": len(series),
        "top": top,
        "ticks": [{"y": y(v), "label": f"{v:,}"} for v in (0, top // 2, top)],
        "first": series[0]["created_at"][:16] if series else "",
        "last": series[-1]["created_at"][:16] if series else "",
        "changes": changes,
        "width": width,
        "height": height,
    }


def write_reports(
    reports_dir: Path | str,
    metrics: dict,
    quarantine: list[dict],
    duplicates: list[dict],
    records: StagedTable | tuple = (),
) -> Path:
    """Write ``<run_id>.html``, ``<run_id>.metrics.json`` and refresh ``index.html``, each whole or not at
    all (``write_atomic``); return the page."""
    reports_dir = Path(reports_dir)
    reports_dir.mkdir(parents=True, exist_ok=True)
    run_id = metrics["run_id"]
    page = reports_dir / f"{run_id}.html"
    earlier = [r["run_id"] for r in _past_runs(reports_dir) if r["run_id"] < run_id]
    metrics = {**metrics, "previous_report": f"{earlier[0]}.html" if earlier else None}
    write_atomic(page, render_run_report(metrics, quarantine, duplicates, records))
    write_atomic(reports_dir / f"{run_id}.metrics.json", json_document(metrics))
    write_atomic(reports_dir / "index.html", _render_index(reports_dir))
    return page
