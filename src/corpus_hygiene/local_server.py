"""Prefect's temporary API server for one ``hygiene run``, spawned by the CLI before its pre-check (and
stopped again when the pre-check finds nothing to do): its start is the longest wait of a short run.

It runs the command of Prefect's own ``SubprocessASGIServer`` (uvicorn with Prefect's app factory, UI
off, the ephemeral-server flags). What this adds: the CLI does not import ``prefect.server`` to start
it. That import alone takes 3.8-3.9 s from the CLI's state (much of it Prefect itself, which the flow
imports next on the same core), and the server's own start only began after it: in a 1%-new run on
the 100k corpus (the flow itself 12.7 s) the flow's first step came 8.5 s after the CLI started;
6.5 s with the server started from here.

Block types are not registered at its start (``SERVER_ONLY``): a run uses no blocks, and even with the
registration memoized, the server imported every installed Prefect collection to hash their blocks
(prefect-dask, so distributed: ~0.6 s of its ~4.5 s start). To ready in 3.2-3.5 s instead of 3.7-4.5 s
(three alternating pairs).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

# for this server only, each unless the user set it: block types are registered by a server that needs them
SERVER_ONLY = {
    "PREFECT_SERVER_REGISTER_BLOCKS_ON_START": "false",
    "PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION": "false",
}
# what a flow's start asks the server first (GET, or POST with a body): see TemporaryServer._warm_up
WARM_UP = (("/admin/version", None), ("/flow_runs/filter", {"limit": 1}), ("/task_runs/filter", {"limit": 1}))
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
            **SERVER_ONLY,
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

    def spawn(self) -> TemporaryServer:
        """Start the server's process and return at once (``wait`` waits until it answers)."""
        self.process = self._spawn()
        return self

    def wait(self, timeout: float = 180.0) -> str:
        """Wait until the spawned server answers; returns its API URL (on another port when the one
        given was taken meanwhile). Raises RuntimeError when it does not answer in ``timeout`` s."""
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
                        self._warm_up()
                        return self.api_url
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"Prefect's temporary server did not answer within {timeout:.0f} s")

    def _warm_up(self) -> None:
        """Ask once what a flow's start asks first. A new server answers its first request of a route
        in 0.3-0.4 s (``/admin/version``; the first query of flow runs likewise), then in ~5 ms; asked
        here, that happens while the CLI still waits for its cluster or reads the cache ahead, not on
        the flow's first step (a flow's body began 0.43-0.58 s after its call, against 0.81-0.99 s,
        three alternating pairs). Read-only and best effort: a failure only leaves it cold."""
        for path, body in WARM_UP:
            request = urllib.request.Request(
                f"{self.api_url}{path}",
                data=None if body is None else json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    response.read()
            except (urllib.error.URLError, OSError):
                return

    def start(self, timeout: float = 180.0) -> str:
        return self.spawn().wait(timeout)

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
