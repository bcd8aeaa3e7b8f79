"""Schedules against a real local Prefect server on loopback (SQLite): `hygiene serve` registers a
deployment with its cron schedule, one run is triggered and its outputs are opened; `prefect deploy`
registers the deployment of prefect.yaml."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from corpus_hygiene.publish.dataset import verify_checksums

from .conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.e2e
BIN = Path(sys.executable).parent


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(predicate, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _metrics(reports: Path) -> dict | None:
    """The run's metrics once written whole."""
    try:
        return json.loads(next(reports.glob("*.metrics.json")).read_text())
    except (StopIteration, ValueError):
        return None


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = tmp_path_factory.mktemp("prefect-home")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = dict(
        os.environ,
        PREFECT_HOME=str(home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_UI_ENABLED="false",
    )
    proc = subprocess.Popen(
        [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait(lambda: _healthy(url), 180, "the Prefect server")
        yield dict(env, PREFECT_API_URL=url)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)


def _prefect(env, *args, cwd=None):
    return subprocess.run(
        [str(BIN / "prefect"), *args], env=env, capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_serve_registers_the_schedule_and_a_triggered_run_publishes(server, tmp_path):
    out = tmp_path / "out"
    serve = subprocess.Popen(
        [
            str(BIN / "hygiene"),
            "serve",
            str(EXAMPLES),
            "--cron",
            "0 3 * * *",
            "--name",
            "nightly-test",
            "--dataset-dir",
            str(out / "clean"),
            "--reports-dir",
            str(out / "reports"),
        ],
        env=server,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        inspect = _wait(
            lambda: (
                (r := _prefect(server, "deployment", "inspect", "corpus-hygiene/nightly-test")).returncode
                == 0
                and r.stdout
            ),
            120,
            "the served deployment",
        )
        assert "0 3 * * *" in inspect
        run = _prefect(server, "deployment", "run", "corpus-hygiene/nightly-test")
        assert run.returncode == 0, run.stderr
        _wait(lambda: (out / "clean" / "manifest.json").exists(), 240, "the triggered run to publish")
        manifest = verify_checksums(out / "clean")
        assert manifest["counts"]["kept"] == 18
        # the report is written after the dataset is published: wait for it too (reading it the moment the
        # manifest appeared failed now and then with StopIteration)
        metrics = _wait(lambda: _metrics(out / "reports"), 60, "the triggered run's report")
        assert metrics["outcome"] == "published"
    finally:
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(timeout=60)


def test_prefect_deploy_registers_the_deployment_of_prefect_yaml(server):
    env = dict(server, CORPUS_HYGIENE_HOME=str(ROOT))
    pool = _prefect(env, "work-pool", "create", "corpus-hygiene", "--type", "process")
    assert pool.returncode == 0, pool.stderr
    deploy = _prefect(env, "--no-prompt", "deploy", "--all", cwd=ROOT)
    assert deploy.returncode == 0, deploy.stdout[-2000:] + deploy.stderr[-2000:]
    inspect = _prefect(env, "deployment", "inspect", "corpus-hygiene/nightly")
    assert (
        inspect.returncode == 0
        and "0 3 * * *" in inspect.stdout
        and "flows/hygiene.py:hygiene_flow" in inspect.stdout
    )


def test_the_deployed_flow_runs_its_tasks_one_at_a_time():
    """The flow `prefect deploy` runs (prefect.yaml's entrypoint) has its own task runner: one thread,
    not Prefect's unbounded pool, where every batch of files ran at once under one GIL."""
    import yaml
    from prefect.flows import load_flow_from_entrypoint
    from prefect.task_runners import ThreadPoolTaskRunner

    [deployment] = yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]
    path, name = deployment["entrypoint"].split(":")
    deployed = load_flow_from_entrypoint(f"{ROOT / path}:{name}")
    assert isinstance(deployed.task_runner, ThreadPoolTaskRunner)
    assert deployed.task_runner._max_workers == 1  # (no public accessor)


def test_a_rerun_against_the_long_lived_server_begins_its_new_files_before_the_flow(server, tmp_path):
    """`hygiene run` with PREFECT_API_URL set: the CLI forks the new files' child before it imports the
    flow, the flow's task takes its result, and the bytes are those of a run that reads no cache."""
    import shutil

    corpus = tmp_path / "in"
    shutil.copytree(EXAMPLES, corpus)

    def run(out: Path, *extra: str) -> subprocess.CompletedProcess:
        args = [str(BIN / "hygiene"), "run", str(corpus), "--dataset-dir", str(out / "clean"),
                "--reports-dir", str(out / "reports"), *extra]  # fmt: skip
        return subprocess.run(args, env=server, capture_output=True, text=True, timeout=300)

    assert run(tmp_path / "out").returncode == 0
    (corpus / "zz_new.txt").write_text("ICLR 2026 Papers\n\n" + "A new abstract about graphs. " * 8, "utf-8")
    proc = run(tmp_path / "out", "--workers", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    if sys.platform == "linux" and (os.cpu_count() or 1) > 1:
        assert "zz_new.txt (forked): begun by the CLI in a forked process while Prefect started" in (
            proc.stdout + proc.stderr
        )
    assert "Starting temporary server" not in proc.stdout + proc.stderr  # the long-lived one served it
    full = run(tmp_path / "full", "--no-cache")
    assert full.returncode == 0, full.stderr[-3000:]

    def parquet(out: Path) -> dict:
        return {k: v for k, v in verify_checksums(out / "clean")["outputs"].items() if k.endswith(".parquet")}

    assert parquet(tmp_path / "out") == parquet(tmp_path / "full")
