"""Prefect's temporary server as the CLI starts it: answers on loopback, moves when its port is taken,
stops with the run."""

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from corpus_hygiene import local_server
from corpus_hygiene.local_server import TemporaryServer, free_port


@pytest.fixture(scope="module", autouse=True)
def _prefect_home(tmp_path_factory):
    # one home for the module (its database is made once, by the first start); the CLI's settings
    from corpus_hygiene.settings import PREFECT_DEFAULTS

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PREFECT_HOME", str(tmp_path_factory.mktemp("prefect")))
        for key, value in PREFECT_DEFAULTS.items():
            mp.setenv(key, value)
        yield


def _health(url: str) -> bool:
    with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
        return json.loads(response.read()) is True


def test_it_answers_then_stops():
    server = TemporaryServer(free_port())
    url = server.start(timeout=180)
    try:
        assert url == f"http://127.0.0.1:{server.port}/api" and _health(url)
        process = server.process
    finally:
        server.stop()
    assert process.poll() is not None and server.process is None


def test_a_taken_port_moves_it_to_another():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = TemporaryServer(port)
        try:
            url = server.start(timeout=180)
            assert server.port != port and _health(url)
        finally:
            server.stop()


class _Answer:
    status = 200

    def read(self) -> bytes:
        return b"true"

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


class _Running:
    def poll(self):
        return None


def _asked(monkeypatch, fail_on: str | None = None) -> list:
    """What ``wait`` asks a server that answers (no process: urlopen replaced)."""
    import corpus_hygiene.local_server as local_server

    asked = []

    def urlopen(request, timeout):
        url = request if isinstance(request, str) else request.full_url
        body = None if isinstance(request, str) or request.data is None else json.loads(request.data)
        asked.append((url.split("/api", 1)[1], body))
        if fail_on and url.endswith(fail_on):
            raise urllib.error.URLError("refused")
        return _Answer()

    monkeypatch.setattr(local_server.urllib.request, "urlopen", urlopen)
    server = TemporaryServer(8)
    server.process = _Running()
    assert server.wait(timeout=5) == "http://127.0.0.1:8/api"
    return asked


def test_once_it_answers_it_is_asked_what_a_flow_asks_first(monkeypatch):
    assert _asked(monkeypatch) == [
        ("/health", None),
        ("/admin/version", None),
        ("/flow_runs/filter", {"limit": 1}),
        ("/task_runs/filter", {"limit": 1}),
    ]


def test_a_failed_warm_up_request_still_gives_the_url(monkeypatch):
    assert _asked(monkeypatch, fail_on="/admin/version") == [("/health", None), ("/admin/version", None)]


# --- the server kept between runs ----------------------------------------------------------------------


HYGIENE = str(Path(sys.executable).with_name("hygiene"))


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_a_process_is_alive_until_it_ends_and_a_zombie_is_not():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    assert local_server._alive(os.getpid()) and local_server._alive(child.pid)
    child.stdin.close()
    for _ in range(200):  # ended, not waited for: a zombie
        if not local_server._alive(child.pid):
            break
        time.sleep(0.02)
    assert not local_server._alive(child.pid)
    child.wait()
    assert not local_server._alive(_dead_pid())


def test_a_lease_is_held_for_the_block_and_the_leases_of_gone_runs_are_dropped(tmp_path):
    (tmp_path / "leases").mkdir()
    gone = tmp_path / "leases" / str(_dead_pid())
    gone.touch()
    assert not local_server._in_use(tmp_path) and not gone.exists()
    with local_server.lease(tmp_path):
        assert (tmp_path / "leases" / str(os.getpid())).exists()
        assert local_server._in_use(tmp_path)
    assert not local_server._in_use(tmp_path) and not list((tmp_path / "leases").iterdir())


def _record(tmp_path, pid: int, **changes) -> None:
    local_server._write_record(tmp_path, {"pid": pid, "port": 8, **local_server._identity(), **changes})


def test_a_kept_server_is_used_only_alive_answering_and_started_with_the_same_settings(tmp_path, monkeypatch):
    monkeypatch.setattr(local_server, "_answers", lambda url: url == "http://127.0.0.1:8/api")
    assert local_server.kept_server_url(tmp_path) is None  # no record
    (tmp_path / "server.json").write_text("{not json")
    assert local_server.kept_server_url(tmp_path) is None
    _record(tmp_path, _dead_pid())
    assert local_server.kept_server_url(tmp_path) is None
    _record(tmp_path, os.getpid(), prefect="0.0.1")
    assert local_server.kept_server_url(tmp_path) is None
    _record(tmp_path, os.getpid())
    monkeypatch.setenv("PREFECT_SERVER_API_KEEPALIVE_TIMEOUT", "7")  # a setting the server did not get
    assert local_server.kept_server_url(tmp_path) is None
    monkeypatch.delenv("PREFECT_SERVER_API_KEEPALIVE_TIMEOUT")
    assert local_server.kept_server_url(tmp_path) == ("http://127.0.0.1:8/api", os.getpid())
    _record(tmp_path, os.getpid(), port=9)  # alive, but does not answer
    assert local_server.kept_server_url(tmp_path) is None


class _Uvicorn:
    should_exit = False


def _retire(tmp_path, monkeypatch, in_use: list[bool]) -> tuple[_Uvicorn, list]:
    """``_retire_when_idle`` with no idle time, the leases answering ``in_use`` in turn (then False)."""
    looks = []

    def used(directory):
        looks.append((directory / "server.json").exists())
        return in_use.pop(0) if in_use else False

    monkeypatch.setattr(local_server, "_in_use", used)
    server = _Uvicorn()
    local_server._retire_when_idle(server, tmp_path, idle=0.0, poll=0.0)
    return server, looks


def test_an_idle_kept_server_withdraws_its_record_then_stops(tmp_path, monkeypatch):
    _record(tmp_path, os.getpid())
    server, looks = _retire(tmp_path, monkeypatch, [True, True, False])
    assert server.should_exit and not (tmp_path / "server.json").exists()
    # busy twice, then idle: the record withdrawn before the last look
    assert looks == [True, True, True, False]


def test_a_run_that_leases_while_the_record_is_withdrawn_keeps_the_server(tmp_path, monkeypatch):
    _record(tmp_path, os.getpid())
    # idle, record withdrawn, then a lease seen: the record comes back; later idle for good
    server, looks = _retire(tmp_path, monkeypatch, [False, True])
    assert looks == [True, False, True, False] and server.should_exit


def test_a_server_that_another_replaced_stops_without_touching_its_record(tmp_path, monkeypatch):
    _record(tmp_path, 1)  # the record names another server
    server, _ = _retire(tmp_path, monkeypatch, [])
    assert server.should_exit and local_server._read_record(tmp_path)["pid"] == 1


def test_a_kept_server_answers_while_a_run_holds_a_lease_and_retires_after(tmp_path):
    server = local_server.TemporaryServer(free_port(), kept_for=1.0, directory=tmp_path)
    with local_server.lease(tmp_path):
        url = server.start(timeout=180)
        pid = server.process.pid
        assert local_server._read_record(tmp_path)["pid"] == pid
        assert local_server.kept_server_url(tmp_path) == (url, pid)
        time.sleep(2.5)  # past its idle time, but leased
        assert _health(url)
    for _ in range(300):
        if server.process.poll() is not None:
            break
        time.sleep(0.05)
    assert server.process.poll() == 0 and not (tmp_path / "server.json").exists()


def _run(corpus, out, env) -> subprocess.CompletedProcess:
    command = [
        HYGIENE,
        "run",
        str(corpus),
        "--dataset-dir",
        str(out / "clean"),
        "--reports-dir",
        str(out / "r"),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)


def test_the_next_run_uses_the_server_a_run_kept_and_server_stop_stops_it(tmp_path):
    env = {**os.environ, "HYGIENE_SERVER_IDLE_MINUTES": "2", "PREFECT_HOME": str(tmp_path / "home")}
    env.pop("CI", None)
    env.pop("PREFECT_API_URL", None)
    try:
        _two_runs_on_one_server(tmp_path, env)
    finally:  # a failed assertion leaves no server behind for its 2 minutes
        local_server.stop_kept(tmp_path / "home" / "hygiene-server")


def _two_runs_on_one_server(tmp_path, env):
    from .conftest import EXAMPLES

    first = _run(EXAMPLES, tmp_path / "a", env)
    assert first.returncode == 0, first.stderr[-2000:]
    kept = re.search(r"Prefect's server \(pid (\d+)\) stays up .* used it for 2 min", first.stderr)
    assert kept, first.stderr[-2000:]
    pid = int(kept[1])
    second = _run(EXAMPLES, tmp_path / "b", env)
    assert second.returncode == 0, second.stderr[-2000:]
    assert f"hygiene: on Prefect's server kept from an earlier run (pid {pid})" in second.stderr
    assert "stays up" not in second.stderr and local_server._alive(pid)
    a, b = (pq.read_table(tmp_path / d / "clean" / "records.parquet") for d in ("a", "b"))
    assert a.equals(b)
    status = subprocess.run(
        [HYGIENE, "server", "status"], capture_output=True, text=True, env=env, timeout=60
    )
    assert f"pid {pid}, http://127.0.0.1:" in status.stdout
    stop = subprocess.run([HYGIENE, "server", "stop"], capture_output=True, text=True, env=env, timeout=60)
    assert stop.stdout.strip() == f"stopped Prefect's server kept from earlier runs (pid {pid})"
    assert not local_server._alive(pid)
    assert not (tmp_path / "home" / "hygiene-server" / "server.json").exists()


def test_server_stop_leaves_a_process_alone_that_took_a_gone_servers_pid(tmp_path):
    _record(tmp_path, os.getpid())  # a live process, not a kept server
    assert local_server.stop_kept(tmp_path) is None
    assert local_server._alive(os.getpid()) and not (tmp_path / "server.json").exists()
