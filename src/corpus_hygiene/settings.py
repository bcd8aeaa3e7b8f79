"""Settings read once, at the edge (CLI), never inside stages.

Prefect's embedded mode is tuned through Prefect's own settings, each only when the user has not set
it: no telemetry or analytics calls (this machine has no internet, and a data tool should not phone
home), a start-up timeout long enough for a fresh database on 2 cores (the 20 s default times out on
a first run), and none of the server's background services that an embedded run never uses (UI,
scheduler, late-run and cancellation sweeps); their shutdown is what printed CancelledError
tracebacks.
"""

from __future__ import annotations

import os
import sys

PREFECT_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY": "false",
    "PREFECT_TELEMETRY_ENABLE_RESOURCE_METRICS": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    "PREFECT_SERVER_UI_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_LATE_RUNS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_FOREMAN_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_CANCELLATION_CLEANUP_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_PAUSE_EXPIRATIONS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_REPOSSESSOR_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_CLEANUP_RECONCILER_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
}


# A served flow needs the server's scheduler and late-run services: they create the scheduled runs.
SCHEDULING_SERVICES = (
    "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED",
    "PREFECT_SERVER_SERVICES_LATE_RUNS_ENABLED",
)


def _set_defaults(defaults: dict[str, str], environ: dict | None) -> None:
    """Set ``defaults`` in the environment (``os.environ`` unless given); values already set win."""
    env = os.environ if environ is None else environ
    for key, value in defaults.items():
        env.setdefault(key, value)


def apply_prefect_defaults(environ: dict | None = None, scheduling: bool = False) -> None:
    """Set our Prefect defaults in the environment; values the user already set win."""
    skip = SCHEDULING_SERVICES if scheduling else ()
    _set_defaults({k: v for k, v in PREFECT_DEFAULTS.items() if k not in skip}, environ)


# Arrow's allocator for the run's processes: jemalloc where the wheel has it (Linux) instead of its
# default, mimalloc. Turning the 400k benchmark's 391,810 record rows into Arrow a row group at a time
# (``dataset.write_slices``, its Parquet file written beside): from_pylist 4.13-4.14 s with mimalloc,
# 2.05-2.07 s with jemalloc (2.8 against 1.0-1.3 s of kernel time); inside a 1%-new run of that corpus
# 5.35-5.67 s against 4.37-4.87 s. The setting only changes where Arrow's buffers live, not a byte of
# the outputs. It is read when Arrow first allocates, so it is set before anything imports pyarrow.
ARROW_DEFAULTS = {"ARROW_DEFAULT_MEMORY_POOL": "jemalloc"} if sys.platform == "linux" else {}


def apply_arrow_defaults(environ: dict | None = None) -> None:
    """Set our Arrow defaults in the environment; values the user already set win."""
    _set_defaults(ARROW_DEFAULTS, environ)
