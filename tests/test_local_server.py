"""Prefect's temporary server as the CLI starts it: answers on loopback, moves when its port is taken,
stops with the run."""

import json
import socket
import urllib.error
import urllib.request

import pytest

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
