"""The ``hygiene`` command: parses and checks its arguments, then calls the flow; errors become one line.

``run`` and ``serve`` hand the flow the same parameters (``flow_parameters``): nothing else passes from
here to the flow. Prefect is imported only once a run is needed.
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import signal
import sys
from pathlib import Path

from corpus_hygiene import __version__
from corpus_hygiene.command_line import (
    cron_error,
    flow_arguments,
    flow_parameters,
    policy_read_once,
    usage_error,
)
from corpus_hygiene.runtime import apply_defaults


class _NoTraceback(logging.Formatter):
    """Prefect's console format without tracebacks: a failure prints its one-line message on the terminal,
    while Prefect's run logs (API, UI) keep the traceback. It formats a copy: handlers share records."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        quiet = logging.makeLogRecord(record.__dict__)
        quiet.exc_info = quiet.exc_text = quiet.stack_info = None
        return self.inner.format(quiet)


def _quiet_console_tracebacks() -> None:
    """Prefect's console handler (set up when Prefect is imported) prints no tracebacks (see --debug)."""
    from prefect.logging.handlers import PrefectConsoleHandler

    for logger in (logging.getLogger(), *map(logging.getLogger, ("uvicorn", "fastapi"))):
        for handler in logger.handlers:
            if isinstance(handler, PrefectConsoleHandler) and not isinstance(handler.formatter, _NoTraceback):
                handler.setFormatter(_NoTraceback(handler.formatter or logging.Formatter()))


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM stops a run as Ctrl-C does: its staged version removed, one line


def _prefect_api(params: dict, *, ui: bool) -> str:
    """The Prefect API this command uses: PREFECT_API_URL when set, else Prefect's server started as this
    process's child (``flows/server.py``), its log in the reports folder."""
    from flows.server import start_prefect_server

    if given := os.environ.get("PREFECT_API_URL"):
        return given
    return start_prefect_server(Path(params["reports_dir"]) / "prefect-server.log", ui=ui)


def _cmd_run(args: argparse.Namespace) -> int:
    from corpus_hygiene.publish.lock import DatasetBusy, wait_for_lock

    apply_defaults()
    params = flow_parameters(args)
    if params["use_cache"]:
        from corpus_hygiene.incremental.run_key import unchanged_version

        dirs = (params["input_dir"], params["dataset_dir"], params["reports_dir"])
        refs = (params["references"], params["reference_text_column"])
        version = unchanged_version(*dirs, args.checked_policy, params["max_file_mb"], refs)
        if version is not None:
            print(f"unchanged: {params['dataset_dir']} ({version}): nothing to do")
            print("it already holds the output of these inputs, policy and code (--no-cache runs again)")
            return 0
    try:  # said before Prefect starts; the flow takes the lock itself for the run
        wait_for_lock(params["dataset_dir"], params["wait_seconds"])
    except DatasetBusy as exc:
        print(f"hygiene: run failed: {exc}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, _interrupt)
    published = os.path.realpath(params["dataset_dir"])
    try:
        _prefect_api(params, ui=False)
        return _run_flow(params, args.debug)
    except KeyboardInterrupt:
        now = os.path.realpath(params["dataset_dir"])
        done = f"published {Path(now).name} before it stopped" if now != published else "nothing published"
        print(f"hygiene: interrupted: {done}; the previous dataset stays", file=sys.stderr)
        return 130


def _run_flow(params: dict, debug: bool) -> int:
    from flows.hygiene import hygiene_flow

    if not debug:
        _quiet_console_tracebacks()
    state = hygiene_flow(**params, return_state=True)
    outcome = state.result(raise_on_failure=False)
    if state.is_completed() and getattr(outcome, "ok", False):
        print(f"run {outcome.run_id}: {outcome.message}")
        if outcome.report is None:  # the flow found the published dataset current
            return 0
        for line in summary_lines(outcome.summary or {}):
            print(f"  {line}")
        print(f"dataset: {outcome.dataset_dir}")
        print(f"report:  {outcome.report}")
        return 0
    why = (state.message or str(outcome)).removeprefix("Flow run encountered an exception: ")
    print(f"hygiene: run failed: {why}", file=sys.stderr)
    if getattr(outcome, "report", None):  # the report of a failed run says why, in full
        print(f"report:  {outcome.report}", file=sys.stderr)
    return 1


def _top(counts: dict, n: int = 6) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{k} {v}" for k, v in items[:n])
    return text + (f", … ({len(items) - n} more)" if len(items) > n else "") if items else "none"


def summary_lines(summary: dict) -> list[str]:
    """The end-of-run screen: what was rejected and why, languages, repairs, time, changes."""
    lines = [
        f"quarantine: {_top(summary.get('quarantine_reasons', {}))}",
        f"languages:  {_top(summary.get('languages', {}))}",
        f"repairs:    {_top(summary.get('fixes', {}))}",
    ]
    stages = summary.get("stage_seconds", {})
    if stages:
        lines.append("time:       " + ", ".join(f"{k} {v:.1f}s" for k, v in stages.items()))
    if summary.get("files_from_cache"):
        lines.append(f"cache:      {summary['files_from_cache']} unchanged files reused")
    changes = summary.get("changes")
    if changes:
        lines.append(
            f"changes:    +{changes['added']} / -{changes['removed']} records since run "
            f"{changes['previous_run_id']}"
        )
    return lines


def _cmd_serve(args: argparse.Namespace) -> int:
    from flows.server import prefect_command

    apply_defaults()
    params = flow_parameters(args)
    if (problem := cron_error(args.cron)) is not None:
        print(f"hygiene: error: {problem}", file=sys.stderr)
        return 2
    api_url = _prefect_api(params, ui=True)
    from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy

    from flows.hygiene import hygiene_flow

    if not args.debug:
        _quiet_console_tracebacks()
    now = shlex.join([prefect_command(), "deployment", "run", f"corpus-hygiene/{args.name}"])
    print(f"Prefect UI: {api_url.removesuffix('/api')} (runs, logs, the reports' links)")
    print(f"run it now: PREFECT_API_URL={api_url} {now}")
    print("Ctrl-C stops serving and pauses the schedule; `hygiene serve` again resumes it", flush=True)
    hygiene_flow.serve(
        name=args.name,
        cron=args.cron,
        parameters=params,
        description=f"corpus-hygiene on {params['input_dir']}, cron {args.cron!r}",
        # One run at a time; a run due while one runs is cancelled, not failed (the next one comes).
        global_limit=ConcurrencyLimitConfig(limit=1, collision_strategy=ConcurrencyLimitStrategy.CANCEL_NEW),
        print_starting_message=False,
    )
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from corpus_hygiene.publish.read import DatasetError, validate_dataset
    from corpus_hygiene.reference.source import unchanged_root

    try:
        manifest, failures = validate_dataset(args.dataset_dir)
    except DatasetError as exc:
        print(f"hygiene: invalid dataset: {exc}", file=sys.stderr)
        return 1
    if failures:
        print(
            f"hygiene: invalid dataset: {len(failures)} contract violations in {args.dataset_dir}",
            file=sys.stderr,
        )
        print("table.column: check failed at row (value)", file=sys.stderr)
        for line in failures:
            print(f"  {line}", file=sys.stderr)
        return 1
    counts = manifest.get("counts", {})
    print(
        f"{args.dataset_dir}: run {manifest['run_id']}, schema v{manifest['schema_version']}, "
        f"{counts.get('kept', '?')} records; checksums match the manifest; every contract check passes"
    )
    for ref in manifest.get("references", ()):
        here = unchanged_root(ref) is not None
        print(f"  reference {ref['name']}: {'its rows resolve' if here else 'moved or changed, not checked'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hygiene",
        description="Turn a folder of raw abstract lists into a clean, deduplicated, validated Parquet "
        "dataset and an HTML quality report.",
    )
    parser.add_argument("--version", action="version", version=f"corpus-hygiene {__version__}")
    debug = {"action": "store_true", "help": "print tracebacks (the default is one line per error)"}
    parser.add_argument("--debug", **debug)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="run the pipeline (a Prefect flow) on a folder of source files",
        description="Run the pipeline on INPUT_DIR: every file under it, recursively. "
        "Exit 0 when the run completed (even with quarantined input), 1 when it failed, 2 for a wrong "
        "command line.",
    )
    flow_arguments(run)
    run.set_defaults(func=_cmd_run)

    serve = sub.add_parser(
        "serve",
        help="run the pipeline on a schedule (Prefect flow.serve) until stopped",
        description="Register a Prefect deployment of the pipeline with a cron schedule and serve it: "
        "every scheduled run processes INPUT_DIR (unchanged files come from the cache). Without "
        "PREFECT_API_URL, Prefect's server (with its UI) runs as this command's child until it stops. "
        "Stop with Ctrl-C.",
    )
    flow_arguments(serve)
    serve.add_argument("--cron", required=True, help='cron schedule, e.g. "0 3 * * *" (03:00 UTC daily)')
    serve.add_argument("--name", default="corpus-hygiene", help="deployment name (default: %(default)s)")
    serve.set_defaults(func=_cmd_serve)

    val = sub.add_parser(
        "validate",
        help="check a published dataset against its manifest",
        description="Re-check a published dataset: manifest present, schema version, every file's "
        "checksum, every contract check of the four tables. Exit 1 with a table of failures when "
        "anything is wrong.",
    )
    val.add_argument("dataset_dir", metavar="DATASET_DIR")
    val.set_defaults(func=_cmd_validate)
    for command in (run, serve, val):  # before or after the command; SUPPRESS keeps the one given before
        command.add_argument("--debug", **debug, default=argparse.SUPPRESS)
        command.set_defaults(command_parser=command)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the command's own usage, with its options, rather than the top-level one
        args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.func in (_cmd_run, _cmd_serve):
        if problem := usage_error(args):
            parser.exit(2, f"hygiene: error: {problem}\n")
        from checks import PolicyError, load_policy

        try:
            args.policy = policy_read_once(args.policy)
        except PolicyError as exc:
            parser.exit(2, f"hygiene: {exc}\n")
        try:  # its first problem, found before Prefect starts
            args.checked_policy = load_policy(args.policy)
        except PolicyError as exc:
            print(f"hygiene: {exc}", file=sys.stderr)
            return 2
    from flows.server import ServerError

    if args.debug:
        return args.func(args)
    try:
        return args.func(args)
    except ServerError as exc:
        print(f"hygiene: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # an unexpected failure: one line here, the traceback with --debug
        print(f"hygiene: error: {type(exc).__name__}: {exc} (--debug prints the traceback)", file=sys.stderr)
        return 1


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
