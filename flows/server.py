"""Prefect's own server (``prefect server start``) as the command's child, when no PREFECT_API_URL names
one: for ``hygiene serve`` with UI and scheduler (an ephemeral server cannot schedule), for ``hygiene run``
API only. Started here rather than by Prefect's ephemeral mode so that it lives exactly as long as its
parent: its own session (a terminal's Ctrl-C reaches the run, which then stops the server last) and a
parent-death signal (a SIGKILLed parent leaves no server behind)."""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

STARTUP_TIMEOUT_SECONDS = 180  # a fresh database's migrations take tens of seconds on 2 cores
PR_SET_PDEATHSIG = 1  # prctl's option number (linux/prctl.h)


class ServerError(Exception):
    """Prefect's server did not start."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def prefect_command() -> str:
    beside = Path(sys.executable).with_name("prefect")
    return str(beside) if beside.exists() else (shutil.which("prefect") or "prefect")


def _die_with_parent():
    """A ``preexec_fn`` that makes the kernel send SIGTERM to the child when this process dies (Linux's
    PR_SET_PDEATHSIG; it survives exec), or None where there is no such call."""
    if not sys.platform.startswith("linux"):
        return None
    libc, parent = ctypes.CDLL(None, use_errno=True), os.getpid()  # loaded before the fork

    def preexec() -> None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the call took effect
            os._exit(1)

    return preexec


def start_prefect_server(log_path: Path, *, ui: bool, timeout: float = STARTUP_TIMEOUT_SECONDS) -> str:
    """Start ``prefect server start`` on a free loopback port (``ui``: the UI and the scheduler's services;
    else the API alone) and return its API URL, also put in ``os.environ["PREFECT_API_URL"]`` for this
    process and its children. The server stops at this process's exit (``atexit``), after Prefect's own
    exit hooks (threading's, which run first) have sent their last logs and events."""
    import httpx  # with prefect

    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, "PREFECT_SERVER_UI_ENABLED": str(ui).lower(), "PREFECT_UI_API_URL": url}
    cmd = [prefect_command(), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        child = subprocess.Popen(
            cmd if ui else [*cmd, "--no-services"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent(),
        )
    atexit.register(_stop, child)
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2) as client:  # one client: a new one a poll would load the CA bundle again
        while True:
            if child.poll() is not None:
                raise ServerError(f"Prefect's server exited with code {child.returncode}; see {log_path}")
            try:
                if client.get(f"{url}/health").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise ServerError(f"Prefect's server did not answer within {timeout:.0f} s; see {log_path}")
            time.sleep(0.5)
    os.environ["PREFECT_API_URL"] = url
    if not ui:
        os.environ["PREFECT_UI_URL"] = ""  # no "View at" links to a page nobody serves
    from prefect.context import refresh_global_settings_context

    refresh_global_settings_context()  # Prefect reads its settings when imported (the --cron check does)
    return url


def _stop(child: subprocess.Popen) -> None:
    child.terminate()
    try:
        child.wait(30)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
