"""Prefect's temporary API server for one ``hygiene run``, started by the CLI once its pre-check found work.

It runs the command of Prefect's own ``SubprocessASGIServer`` (uvicorn with Prefect's app factory, UI
off, the ephemeral-server flags). What this adds: the CLI does not import ``prefect.server`` to start
it. That import alone takes 3.8-3.9 s from the CLI's state (much of it Prefect itself, which the flow
imports next on the same core), and the server's own start only began after it: in a 1%-new run on
the 100k corpus (the flow itself 12.7 s) the flow's first step came 8.5 s after the CLI started;
6.5 s with the server started from here.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

PORT_TAKEN = 3  # uvicorn's exit code when it cannot bind (Prefect's class starts again elsewhere too)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TemporaryServer:
    def __init__(self, port: int) -> None:
        self.port = port
        self.process: subprocess.Popen | None = None

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def _spawn(self) -> subprocess.Popen:
        prefect_dir = importlib.util.find_spec("prefect").submodule_search_locations[0]  # not imported
        env = {
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",
            "PREFECT__SERVER_FINAL": "1",
        }
        command = [
            sys.executable, "-m", "uvicorn", "--app-dir", str(Path(prefect_dir).parent), "--factory",
            "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(self.port),
            "--log-level", "error", "--lifespan", "on",
        ]  # fmt: skip
        return subprocess.Popen(command, env=env)

    def start(self, timeout: float = 180.0) -> str:
        """Start the server and wait until it answers; returns its API URL (on another port when the
        one given was taken meanwhile). Raises RuntimeError when it does not answer in ``timeout`` s."""
        self.process = self._spawn()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code == PORT_TAKEN:
                self.port = free_port()
                self.process = self._spawn()
            elif code is not None:
                raise RuntimeError(f"Prefect's temporary server exited with code {code} while starting")
            try:
                with urllib.request.urlopen(f"{self.api_url}/health", timeout=2) as response:
                    if response.status == 200:
                        return self.api_url
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"Prefect's temporary server did not answer within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
