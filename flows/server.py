"""Prefect's own server for ``hygiene serve``, started as the command's child when no PREFECT_API_URL
names one: an ephemeral server cannot schedule runs, and its runs are visible in no UI."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STARTUP_TIMEOUT_SECONDS = 180  # a fresh database's migrations take tens of seconds on 2 cores


class ServerError(Exception):
    """Prefect's server did not start."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _prefect_command() -> str:
    beside = Path(sys.executable).with_name("prefect")
    return str(beside) if beside.exists() else (shutil.which("prefect") or "prefect")


@contextmanager
def prefect_server(log_path: Path, timeout: float = STARTUP_TIMEOUT_SECONDS) -> Iterator[str]:
    """``prefect server start`` (UI and scheduler on) on a free loopback port, until the block ends;
    yields its API URL, also put in ``os.environ["PREFECT_API_URL"]`` for this process and its children.
    Set before Prefect is imported: Prefect reads its settings at import."""
    import httpx  # with prefect

    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, "PREFECT_SERVER_UI_ENABLED": "true", "PREFECT_UI_API_URL": url}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        cmd = [_prefect_command(), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
        child = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if child.poll() is not None:
                raise ServerError(f"Prefect's server exited with code {child.returncode}; see {log_path}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise ServerError(f"Prefect's server did not answer within {timeout:.0f} s; see {log_path}")
            time.sleep(0.5)
        os.environ["PREFECT_API_URL"] = url
        yield url
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        child.terminate()
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
