"""The ``hygiene`` command line: the options of ``run`` and ``serve`` (the flow's parameters), and their
checks, made before any work starts (exit 2 with one line)."""

from __future__ import annotations

import argparse
import atexit
import math
import os
import socket
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from corpus_hygiene.publish.lock import lock_problem
from corpus_hygiene.publish.owner import dataset_dir_problem, overlap_problem
from corpus_hygiene.reference.source import self_reference


def flow_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``run`` and ``serve``: the flow's parameters (``flow_parameters``)."""
    parser.add_argument("input_dir", metavar="INPUT_DIR", help="folder of source files (any encoding)")
    parser.add_argument(
        "--dataset-dir",
        default="data/clean",
        help="where the dataset is published (a symlink to the current version; default: %(default)s)",
    )
    parser.add_argument(
        "--reports-dir", default="reports", help="where HTML reports go (default: %(default)s)"
    )
    parser.add_argument(
        "--policy", default=None, help="policy TOML file (default: the bundled checks/policy.toml)"
    )
    parser.add_argument(
        "--max-file-mb",
        type=float,
        default=None,
        help="refuse files larger than this (default: from the policy)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="process files on a local Dask cluster of this many worker processes (default: 1, no Dask)",
    )
    parser.add_argument("--dask-address", default=None, help="process files on this running Dask scheduler")
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for another run writing the same dataset (default: 0, fail at once)",
    )
    parser.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="PATH",
        help="check the run against this dataset (a published one, a Parquet file or folder; repeatable): "
        "its copies become duplicates, records containing its short texts are quarantined",
    )
    parser.add_argument(
        "--reference-text-column",
        default=None,
        metavar="NAME",
        help="the references' text column (default: the policy's, 'text')",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="process every file again instead of reusing the results of unchanged files, and run even "
        "when the published dataset is already the output of these inputs",
    )


def flow_parameters(args: argparse.Namespace) -> dict:
    """The flow's parameters from the command line; paths absolute, so that a served run finds them."""
    return {
        "input_dir": str(Path(args.input_dir).absolute()),
        "dataset_dir": str(Path(args.dataset_dir).absolute()),
        "reports_dir": str(Path(args.reports_dir).absolute()),
        "policy_path": str(Path(args.policy).absolute()) if args.policy else None,
        "max_file_mb": args.max_file_mb,
        "use_cache": not args.no_cache,
        "workers": args.workers,
        "dask_address": args.dask_address,
        "wait_seconds": args.wait,
        "references": [str(Path(p).absolute()) for p in args.reference],
        "reference_text_column": args.reference_text_column,
    }


def _unwritable(path: Path) -> bool:
    """``path`` cannot be created or written: its nearest existing ancestor is not a writable folder."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return not (path.is_dir() and os.access(path, os.W_OK | os.X_OK))


def _unreachable(address: str, timeout: float = 3.0) -> str | None:
    """Why no Dask scheduler answers at ``address`` (``tcp://host:port``), or None. Over plain TCP a
    scheduler greets first; anything else listening there would leave Dask's client waiting forever."""
    parsed = urlsplit(address if "://" in address else f"tcp://{address}")
    if parsed.hostname is None or parsed.port is None:
        return "it is not tcp://HOST:PORT"
    try:
        with socket.create_connection((parsed.hostname, parsed.port), timeout=timeout) as conn:
            if parsed.scheme == "tcp" and not conn.recv(1):
                return "it closed the connection: not a Dask scheduler"
    except TimeoutError:
        return f"something listens there but sent no Dask greeting in {timeout:g} s: not a Dask scheduler"
    except OSError as exc:
        return f"nothing answers there ({exc.strerror or exc})"
    return None


def _environment_error() -> str | None:
    """The Prefect settings of the environment that would fail a run late (a long traceback)."""
    api = os.environ.get("PREFECT_API_URL")
    if api and (urlsplit(api).scheme not in ("http", "https") or not urlsplit(api).netloc):
        return f"PREFECT_API_URL={api!r} is not an http(s) URL (e.g. http://127.0.0.1:4200/api)"
    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect")
    if not api and _unwritable(home):
        return f"PREFECT_HOME {str(home)!r} cannot be created or written (Prefect keeps its database there)"
    return None


def _reference_problem(references: list[str], dataset_dir: str) -> str | None:
    if missing := next((p for p in references if not os.path.exists(p)), None):
        return f"--reference {missing!r}: no such file or folder"
    return self_reference(references, dataset_dir)


def usage_error(args: argparse.Namespace) -> str | None:
    """The command line's and environment's first problem, found before any work (exit 2), or None."""
    if not Path(args.input_dir).is_dir():
        return f"input folder {args.input_dir!r} does not exist or is not a folder"
    cores = len(os.sched_getaffinity(0))
    if not 1 <= args.workers <= cores:
        return f"--workers must be 1 to {cores}, the cores this machine gives us (got {args.workers})"
    if args.workers > 1 and args.dask_address:
        return "--workers makes a local Dask cluster and --dask-address uses another: give one of them"
    if not (math.isfinite(args.wait) and args.wait >= 0):
        return f"--wait must be 0 or more seconds (got {args.wait:g})"
    mb = args.max_file_mb
    if mb is not None and not (math.isfinite(mb) and 0 < mb <= 2**40):
        return f"--max-file-mb must be a positive number of MB up to 2**40 (got {mb:g})"
    for option, folder in (("--dataset-dir", args.dataset_dir), ("--reports-dir", args.reports_dir)):
        if _unwritable(Path(folder)):
            return f"{option} {folder!r} cannot be created or written"
    if problem := dataset_dir_problem(args.dataset_dir) or lock_problem(args.dataset_dir):
        return problem
    if overlap := overlap_problem(args.input_dir, args.dataset_dir, args.reports_dir):
        return overlap
    if problem := _reference_problem(args.reference, args.dataset_dir):
        return problem
    if args.dask_address and (why := _unreachable(args.dask_address)):
        return f"--dask-address {args.dask_address}: {why}"
    return _environment_error()


def policy_read_once(policy: str | None) -> str | None:
    """The policy path every later step reads. A pipe (``--policy <(…)``) can be read only once: its
    bytes go to a private file first, removed when this process exits."""
    if policy is None or not os.path.exists(policy) or Path(policy).is_file():
        return policy
    from checks import read_policy_bytes

    raw = read_policy_bytes(Path(policy))
    fd, path = tempfile.mkstemp(prefix="hygiene-policy-", suffix=".toml")
    with os.fdopen(fd, "wb") as out:
        out.write(raw)
    atexit.register(os.unlink, path)
    return path


def cron_error(cron: str) -> str | None:
    """Why Prefect would refuse this cron expression (its own validation), or None."""
    from prefect.client.schemas.schedules import CronSchedule
    from pydantic import ValidationError

    try:
        CronSchedule(cron=cron)
    except ValidationError as exc:
        return f"--cron {cron!r}: {exc.errors()[0]['msg']}"
    return None
