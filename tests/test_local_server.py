"""Prefect's temporary server as the CLI starts it: answers on loopback, moves when its port is taken,
stops with the run."""

import json
import socket
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
