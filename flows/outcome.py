"""What a run hands back: to the CLI (``RunOutcome``) and to the Prefect UI (artifacts)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact
from prefect.events import emit_event


@dataclass(frozen=True, slots=True)
class RunOutcome:
    run_id: str
    ok: bool
    message: str
    dataset_dir: str | None = None
    report: str | None = None
    counts: dict | None = None
    summary: dict | None = None  # what the CLI prints on one screen (``cli.summary_lines``)


def summary_of(metrics: dict) -> dict:
    return {
        "quarantine_reasons": metrics["quarantine_reasons"],
        "languages": metrics["languages"],
        "fixes": metrics["fix_counts"],
        "files_from_cache": metrics["files_from_cache"],
        "stage_seconds": metrics["stage_seconds"],
        "changes": metrics.get("changes"),
    }


def publish_artifacts(metrics: dict, page: Path) -> None:
    """What a run shows in the Prefect UI: a summary, a link to the report, the quarantine reasons."""
    c = metrics["counts"]
    gates = ", ".join(f"{g['name']} {'pass' if g['passed'] else 'FAIL'}" for g in metrics.get("gates", []))
    create_markdown_artifact(
        markdown=(
            f"# corpus-hygiene run `{metrics['run_id']}`\n\n**{metrics['outcome']}**\n\n"
            f"| ingested | kept | duplicates | quarantined |\n|---|---|---|---|\n"
            f"| {c['ingested']} | {c['kept']} | {c['duplicates']} | {c['quarantined']} |\n\n"
            f"Gates: {gates or 'not evaluated'}\n\nReport: `{page.resolve()}`\n"
        ),
        key="corpus-hygiene-summary",
        description="Outcome and counts of this run",
    )
    create_link_artifact(
        link=page.resolve().as_uri(), link_text="HTML quality report", key="corpus-hygiene-report"
    )
    create_table_artifact(
        table=[{"reason": k, "rows": v} for k, v in metrics["quarantine_reasons"].items()]
        or [{"reason": "-", "rows": 0}],
        key="corpus-hygiene-quarantine",
        description="Quarantined rows per reason",
    )


def announce(event: str, dataset_dir: str, metrics: dict, page: Path | str | None) -> None:
    """A Prefect event (``corpus-hygiene.dataset.published`` or ``corpus-hygiene.gate.failed``) about the
    dataset, so that an automation can react: the counts, the outcome and the report's path as payload."""
    emit_event(
        event=f"corpus-hygiene.{event}",
        resource={
            "prefect.resource.id": f"corpus-hygiene.dataset.{dataset_dir}",
            "prefect.resource.name": dataset_dir,
        },
        payload={
            "run_id": metrics["run_id"],
            "outcome": metrics["outcome"],
            "counts": metrics["counts"],
            "report": str(page) if page else None,
        },
    )
