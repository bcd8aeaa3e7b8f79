"""Schedules on Prefect's own server: `hygiene serve` without PREFECT_API_URL starts `prefect server
start` as its child, fires its cron schedule, shows the run in the UI it prints, and stops the server
when it stops; a scheduled (deployment) run publishes the same bytes as `hygiene run`; `prefect deploy`
registers the deployment of prefect.yaml; `hygiene run` with PREFECT_API_URL runs on that server."""

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .conftest import EXAMPLES, ROOT, parquet_checksums, prefect_env, prefect_healthy, wait_for

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


def _hygiene_run(env: dict, out: Path, *extra: str) -> subprocess.CompletedProcess:
    args = [str(BIN / "hygiene"), "run", str(EXAMPLES), "--dataset-dir", str(out / "clean"),
            "--reports-dir", str(out / "reports"), *extra]  # fmt: skip
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)


def test_serve_starts_prefects_server_fires_its_schedule_and_stops_it(tmp_path):
    out = tmp_path / "served"
    log = tmp_path / "serve.log"
    with log.open("w") as sink:
        serve = subprocess.Popen(
            [str(BIN / "hygiene"), "serve", str(EXAMPLES), "--cron", "* * * * *", "--name", "every-minute",
             "--dataset-dir", str(out / "clean"), "--reports-dir", str(out / "reports")],
            env=prefect_env(tmp_path), stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        ui = wait_for(
            lambda: re.search(r"Prefect UI: (http://127\.0\.0\.1:\d+)", log.read_text()), 240, "the UI"
        )
        ui_url = ui.group(1)
        assert httpx.get(ui_url, timeout=10).status_code == 200  # the UI itself, not a 404
        wait_for(lambda: (out / "clean" / "manifest.json").exists(), 300, "the scheduled run to publish")
        runs = httpx.post(f"{ui_url}/api/flow_runs/filter", json={}, timeout=10).json()
        scheduled = [r for r in runs if r["deployment_id"] and r["state_type"] in ("RUNNING", "COMPLETED")]
        assert scheduled, runs  # the scheduled run is listed by the server serve started
        deployment = httpx.get(f"{ui_url}/api/deployments/{scheduled[0]['deployment_id']}", timeout=10).json()
        assert deployment["name"] == "every-minute"
        served = parquet_checksums(out / "clean")
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=120)
    assert not prefect_healthy(f"{ui_url}/api"), "Prefect's server outlived `hygiene serve`"
    # a deployment run and `hygiene run` execute one code path: the same bytes
    direct = _hygiene_run(prefect_env(tmp_path), tmp_path / "direct")
    assert direct.returncode == 0, direct.stderr[-3000:]
    assert "View at" not in direct.stdout + direct.stderr  # no link to a server that has no UI
    assert parquet_checksums(tmp_path / "direct" / "clean") == served


def _prefect(env, *args, cwd=None):
    return subprocess.run(
        [str(BIN / "prefect"), *args], env=env, capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_prefect_deploy_registers_the_deployment_of_prefect_yaml(prefect_server):
    env = dict(prefect_server, CORPUS_HYGIENE_HOME=str(ROOT))
    pool = _prefect(env, "work-pool", "create", "corpus-hygiene", "--type", "process")
    assert pool.returncode == 0, pool.stderr
    deploy = _prefect(env, "--no-prompt", "deploy", "--all", cwd=ROOT)
    assert deploy.returncode == 0, deploy.stdout[-2000:] + deploy.stderr[-2000:]
    inspect = _prefect(env, "deployment", "inspect", "corpus-hygiene/nightly")
    assert inspect.returncode == 0 and "0 3 * * *" in inspect.stdout
    assert "flows/hygiene.py:hygiene_flow" in inspect.stdout
    # the deployment's concurrency limit of 1: Prefect keeps it as a global limit named after it
    limit = inspect.stdout.split("'global_concurrency_limit': {")[1].split("}")[0]
    assert "'name': 'deployment:" in limit and "'limit': 1," in limit


def test_hygiene_run_with_prefect_api_url_runs_on_that_server(prefect_server, tmp_path):
    proc = _hygiene_run(prefect_server, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Starting temporary server" not in proc.stdout + proc.stderr
    runs = httpx.post(f"{prefect_server['PREFECT_API_URL']}/flow_runs/filter", json={}, timeout=10).json()
    (run,) = [r for r in runs if r["name"] in proc.stdout + proc.stderr and r["state_type"] == "COMPLETED"]
    # the per-file stage's progress artifact, at 100% when the stage is done
    body = {"flow_runs": {"id": {"any_": [run["id"]]}}, "artifacts": {"type": {"any_": ["progress"]}}}
    (progress,) = httpx.post(
        f"{prefect_server['PREFECT_API_URL']}/artifacts/filter", json=body, timeout=10
    ).json()
    assert progress["data"] == 100.0 and progress["description"].startswith(
        "process_files: 10/10 files, 31 paragraphs,"
    )


def _events(api: str, name: str, dataset: Path) -> list[dict]:
    """The events named ``name`` about ``dataset`` (other tests' runs share the server)."""
    body = {"filter": {"event": {"name": [name]}}, "limit": 50}
    events = httpx.post(f"{api}/events/filter", json=body, timeout=10).json().get("events", [])
    return [e for e in events if e["resource"].get("prefect.resource.name") == str(dataset)]


def test_a_run_announces_published_and_gate_failed_as_prefect_events(prefect_server, tmp_path):
    from checks import DEFAULT_POLICY_PATH

    api = prefect_server["PREFECT_API_URL"]
    ok = _hygiene_run(prefect_server, tmp_path / "ok")
    assert ok.returncode == 0, ok.stderr[-3000:]
    dataset = tmp_path / "ok" / "clean"
    (published,) = wait_for(
        lambda: _events(api, "corpus-hygiene.dataset.published", dataset), 60, "the event"
    )
    assert published["payload"]["counts"]["kept"] == 20 and published["payload"]["report"].endswith(".html")
    strict = tmp_path / "strict.toml"
    strict.write_text(
        DEFAULT_POLICY_PATH.read_text("utf-8").replace(
            "max_quarantine_share = 0.5", "max_quarantine_share = 0.1"
        )
    )
    failed = _hygiene_run(prefect_server, tmp_path / "strict", "--policy", str(strict))
    assert failed.returncode == 1
    strict_dataset = tmp_path / "strict" / "clean"
    (gate,) = wait_for(
        lambda: _events(api, "corpus-hygiene.gate.failed", strict_dataset), 60, "the gate.failed event"
    )
    assert gate["payload"]["outcome"].startswith("gate failed, nothing published: quarantine_share")


def _deployment(api: str, name: str) -> dict | None:
    found = httpx.post(f"{api}/deployments/filter", json={}, timeout=10).json()
    return next((d for d in found if d["name"] == name), None)


def test_serve_runs_one_at_a_time_its_hint_works_as_printed_and_ctrl_c_pauses_the_schedule(
    prefect_server, tmp_path
):
    api = prefect_server["PREFECT_API_URL"]
    serve = subprocess.Popen(
        [str(BIN / "hygiene"), "serve", str(EXAMPLES), "--cron", "0 3 * * *", "--name", "ctrl-c",
         "--dataset-dir", str(tmp_path / "clean"), "--reports-dir", str(tmp_path / "reports")],
        env=prefect_server, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deployment = wait_for(lambda: _deployment(api, "ctrl-c"), 120, "the served deployment")
        limit = deployment["global_concurrency_limit"]
        assert limit["limit"] == 1 and deployment["concurrency_options"]["collision_strategy"] == "CANCEL_NEW"
        hint = next(line for line in iter(serve.stdout.readline, "") if line.startswith("run it now: "))
        env = {k: v for k, v in prefect_server.items() if k != "PREFECT_API_URL"}  # the hint names it
        now = subprocess.run(hint.removeprefix("run it now: "), shell=True, env=env, capture_output=True,
                             text=True, timeout=120)  # fmt: skip
        assert now.returncode == 0 and "Created flow run" in now.stdout, now.stdout + now.stderr
        wait_for(lambda: (tmp_path / "clean" / "manifest.json").is_file(), 180, "the served run's dataset")
    finally:
        serve.send_signal(signal.SIGINT)  # what Ctrl-C sends
        output, _ = serve.communicate(timeout=60)
    assert serve.returncode == 0, output[-3000:]
    assert "Traceback" not in output
    deployment = _deployment(api, "ctrl-c")  # paused: no Late runs pile up while nothing serves it
    assert deployment["paused"] is True or [s["active"] for s in deployment["schedules"]] == [False]


def test_a_deployments_folders_come_from_prefect_variables_then_environment_then_the_sample_layout(
    prefect_server,
):
    def resolved(**env) -> list[str]:
        code = (
            "from flows.hygiene import folder; print(folder('input_dir', None), folder('reports_dir', None))"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], env=dict(prefect_server, **env), capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout.split()

    assert resolved() == ["examples/corpus", "reports"]
    assert resolved(CORPUS_HYGIENE_REPORTS_DIR="/srv/reports") == ["examples/corpus", "/srv/reports"]
    api = prefect_server["PREFECT_API_URL"]
    created = httpx.post(f"{api}/variables/", json={"name": "corpus_hygiene_reports_dir", "value": "/srv/r2"})
    assert created.status_code == 201, created.text
    try:
        assert resolved(CORPUS_HYGIENE_REPORTS_DIR="/srv/reports") == ["examples/corpus", "/srv/r2"]
    finally:
        httpx.delete(f"{api}/variables/name/corpus_hygiene_reports_dir")
