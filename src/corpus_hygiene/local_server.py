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

A server started for a run may stay up for the next runs (``kept_for``, ``HYGIENE_SERVER_IDLE_MINUTES``):
then it runs this module (``python -m corpus_hygiene.local_server``: uvicorn with the same app and
settings, in a session of its own) and retires once no run has used it for that long. Each run that
could use it holds a lease (a file named by its pid) from before it looks for the server to its end;
``kept_server_url`` finds one that answers. Nothing else changes: a run on a kept server is a run on a
long-lived server (``PREFECT_API_URL``), the path ``hygiene serve`` and deployments take.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
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
    """``kept_for`` seconds > 0: the server stays up after the run until no run has used it for that
    long (its record and the runs' leases in ``directory``, see ``kept_dir``)."""

    def __init__(self, port: int, kept_for: float = 0.0, directory: Path | None = None) -> None:
        self.port = port
        self.process: subprocess.Popen | None = None
        self.kept_for = kept_for
        self.directory = directory if directory is not None else kept_dir()

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
        if self.kept_for > 0:
            return self._spawn_kept(env)
        command = [
            sys.executable, "-m", "uvicorn", "--app-dir", str(Path(prefect_dir).parent), "--factory",
            "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(self.port),
            "--log-level", "error", "--lifespan", "on",
        ]  # fmt: skip
        return subprocess.Popen(command, env=env)

    def _spawn_kept(self, env: dict) -> subprocess.Popen:
        """This module as the server, in a session of its own (Ctrl-C on the run does not reach it),
        its output in ``server.log``; then its record (``_write_record``), which the next runs find."""
        self.directory.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable, "-m", "corpus_hygiene.local_server", str(self.port), str(self.directory),
            str(self.kept_for),
        ]  # fmt: skip
        with (self.directory / "server.log").open("ab") as log:
            process = subprocess.Popen(
                command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
            )
        _write_record(self.directory, {"pid": process.pid, "port": self.port, **_identity()})
        return process

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


# --- a server kept between runs ---------------------------------------------------------------------

IDLE_SETTING = "HYGIENE_SERVER_IDLE_MINUTES"
# Minutes a server started for a run stays up once no run uses it. A 1%-new re-run of the 100k
# benchmark corpus: 5.21-5.53 s on a running server against 6.49-7.04 s starting one (the flow's first
# step at 1.8-1.9 s against 3.3-4.0 s), three alternating pairs.
DEFAULT_IDLE_MINUTES = 10.0
RECORD = "server.json"
POLL_SECONDS = 1.0  # how often a kept server looks at the leases


def idle_seconds(environ=None) -> float:
    """How long a server started for a run stays up for the next ones: ``HYGIENE_SERVER_IDLE_MINUTES``
    (0: it stops with its run), by default ``DEFAULT_IDLE_MINUTES``, and 0 in CI (``CI`` set): a
    process outliving the job is not wanted there.

    >>> idle_seconds({}), idle_seconds({"CI": "true"}), idle_seconds({"HYGIENE_SERVER_IDLE_MINUTES": "0.5"})
    (600.0, 0.0, 30.0)
    """
    env = os.environ if environ is None else environ
    value = env.get(IDLE_SETTING)
    if value is not None:
        with contextlib.suppress(ValueError):
            return max(0.0, float(value) * 60)
    if env.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        return 0.0
    return DEFAULT_IDLE_MINUTES * 60


def kept_dir() -> Path:
    """Where the kept server's record and the runs' leases live: beside Prefect's database, in
    PREFECT_HOME (a server is kept for one database)."""
    home = os.environ.get("PREFECT_HOME") or "~/.prefect"
    return Path(home).expanduser() / "hygiene-server"


def _identity() -> dict:
    """What a run must share with the server it uses: the interpreter, Prefect's version and the
    PREFECT_ settings the server was started with (but the API URL, which is the server's own)."""
    settings = sorted(
        (k, v) for k, v in os.environ.items() if k.startswith("PREFECT_") and k != "PREFECT_API_URL"
    )
    return {
        "python": sys.executable,
        "prefect": importlib.metadata.version("prefect"),
        "settings": hashlib.sha256(json.dumps(settings).encode()).hexdigest()[:16],
    }


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not: in a container nobody may reap it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return False
    except (OSError, IndexError):
        pass
    try:  # no /proc (not Linux)
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _read_record(directory: Path) -> dict | None:
    try:
        record = json.loads((directory / RECORD).read_text())
        return record if isinstance(record, dict) and isinstance(record.get("pid"), int) else None
    except (OSError, ValueError):
        return None


def _write_record(directory: Path, record: dict, replace: bool = True) -> bool:
    """Write the server's record whole (a reader never sees half of it); with ``replace`` False only
    where there is none. Whether it was written."""
    temporary = directory / f".{RECORD}.{os.getpid()}"
    temporary.write_text(json.dumps(record))
    try:
        if replace:
            os.replace(temporary, directory / RECORD)
        else:
            os.link(temporary, directory / RECORD)  # fails where one exists
        return True
    except FileExistsError:
        return False
    finally:
        temporary.unlink(missing_ok=True)


def _withdraw(directory: Path, pid: int) -> dict | None:
    """Remove the record if it names server ``pid`` (not one that replaced it); the record removed."""
    record = _read_record(directory)
    if record is None or record["pid"] != pid:
        return None
    (directory / RECORD).unlink(missing_ok=True)
    return record


@contextlib.contextmanager
def lease(directory: Path | None = None) -> Iterator[None]:
    """This run may use the kept server: from before it looks for one to its end. A lease whose run
    died is dropped by the server (``_in_use``)."""
    leases = (directory if directory is not None else kept_dir()) / "leases"
    leases.mkdir(parents=True, exist_ok=True)
    path = leases / str(os.getpid())
    path.touch()
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def _in_use(directory: Path) -> bool:
    """Whether a live run holds a lease; the leases of runs that are gone are removed."""
    used = False
    for path in (directory / "leases").glob("[0-9]*"):
        if _alive(int(path.name)):
            used = True
        else:
            path.unlink(missing_ok=True)
    return used


def _answers(url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def kept_server_url(directory: Path | None = None) -> tuple[str, int] | None:
    """The API URL and pid of a server kept from an earlier run that this run can use: its record names
    a live process of the same interpreter, Prefect and settings, and it answers now. None otherwise
    (one still starting for another run is not waited for: this run starts its own)."""
    directory = directory if directory is not None else kept_dir()
    record = _read_record(directory)
    if record is None or not _alive(record["pid"]) or any(record.get(k) != v for k, v in _identity().items()):
        return None
    url = f"http://127.0.0.1:{record.get('port')}/api"
    return (url, record["pid"]) if _answers(url) else None


def stop_kept(directory: Path | None = None, timeout: float = 10.0) -> int | None:
    """Stop the kept server now (SIGTERM, then SIGKILL after ``timeout`` s); its pid, None when there
    was none."""
    directory = directory if directory is not None else kept_dir()
    record = _read_record(directory)
    if record is None:
        return None
    pid = record["pid"]
    (directory / RECORD).unlink(missing_ok=True)
    if not _alive(pid) or not _is_kept_server(pid, record.get("port")):
        return None  # gone; its pid may be another process's now
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    return pid


def _is_kept_server(pid: int, port) -> bool:
    """Whether process ``pid`` is a kept server (its command line, where /proc has it; else whether the
    recorded port answers)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"corpus_hygiene.local_server" in cmdline.read()
    except OSError:
        return _answers(f"http://127.0.0.1:{port}/api")


def _retire_when_idle(server, directory: Path, idle: float, poll: float = POLL_SECONDS) -> None:
    """Stop ``server`` (uvicorn's) once no live run has held a lease for ``idle`` seconds. Its record is
    withdrawn first and the leases looked at once more: a run leases before it reads the record, so a
    run that came in between is seen and the server stays (the record back), and one that comes after
    finds no record and starts its own server."""
    pid = os.getpid()
    quiet_since = time.monotonic()
    while not server.should_exit:
        time.sleep(poll)
        if _in_use(directory):
            quiet_since = time.monotonic()
            continue
        if time.monotonic() - quiet_since < idle:
            continue
        record = _withdraw(directory, pid)
        if record is not None and _in_use(directory):
            _write_record(directory, record, replace=False)
            quiet_since = time.monotonic()
            continue
        server.should_exit = True


def serve_kept(port: int, directory: Path, idle: float) -> int:
    """The kept server's process: Prefect's app under uvicorn as ``TemporaryServer`` starts it, and a
    thread that retires it when idle. Exit code ``PORT_TAKEN`` when it could not start (as uvicorn's)."""
    import threading

    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(
            "prefect.server.api.server:create_app", factory=True, host="127.0.0.1", port=port,
            log_level="error", lifespan="on",
        )
    )  # fmt: skip
    threading.Thread(target=_retire_when_idle, args=(server, directory, idle), daemon=True).start()
    try:
        server.run()
    except SystemExit:  # uvicorn's exit when it cannot bind or the app failed to start
        pass
    finally:
        _withdraw(directory, os.getpid())
    return 0 if server.started else PORT_TAKEN


if __name__ == "__main__":
    sys.exit(serve_kept(int(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])))
