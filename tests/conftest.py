from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SEEDS = SHARED / "seeds"
EXAMPLES = ROOT / "examples" / "corpus"

settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
# `make fuzz`: the fuzz tests with many more examples (FUZZ_EXAMPLES)
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "5000")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session", autouse=True)
def prefect_home(tmp_path_factory):
    """The runs a pytest process (an xdist worker) starts get a Prefect home of their own: two temporary
    servers never migrate one fresh database at once, and the user's ~/.prefect is left alone."""
    if "PREFECT_HOME" in os.environ:
        yield
        return
    os.environ["PREFECT_HOME"] = str(tmp_path_factory.mktemp("prefect-home"))
    yield
    del os.environ["PREFECT_HOME"]


needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason="../shared/seeds is not present")


@pytest.fixture(scope="session")
def policy():
    from checks import load_policy

    return load_policy()


def signal_columns(text: str, lang: str = "en") -> dict:
    """The records table's signal columns for ``text``, as the pipeline computes them."""
    from corpus_hygiene.signals import signals_of

    return {**signals_of(text, lang).columns(), "lost_words": []}


def wait_for(predicate, timeout: float, what: str):
    """``predicate()``'s first true value, polled every second; an AssertionError after ``timeout`` s."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if value := predicate():
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def prefect_healthy(url: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def prefect_env(home: Path, **extra) -> dict:
    """This environment without its Prefect settings, with a Prefect home of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    return dict(env, PREFECT_HOME=str(home / "prefect-home"), **extra)


@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory):
    """A `prefect server start` for one test module: the environment of runs on it."""
    import signal
    import subprocess
    import sys

    from flows.server import free_port

    url = f"http://127.0.0.1:{free_port()}/api"
    env = prefect_env(tmp_path_factory.mktemp("prefect"), PREFECT_SERVER_ANALYTICS_ENABLED="false")
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("prefect")), "server", "start", "--host", "127.0.0.1",
         "--port", url.split(":")[-1][:-4]],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(lambda: prefect_healthy(url), 180, "the Prefect server")
        yield dict(env, PREFECT_API_URL=url)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)


def parquet_checksums(dataset: Path) -> dict:
    """The sha256 of each table of a published dataset, as its manifest lists them (checked first)."""
    from corpus_hygiene.publish.read import verify_checksums

    return {k: v["sha256"] for k, v in verify_checksums(dataset)["outputs"].items() if k.endswith(".parquet")}


@pytest.fixture(scope="module")
def dask_scheduler(tmp_path_factory):
    """A `dask scheduler` and two `dask worker` processes, each started apart: the scheduler's address."""
    from benchmarks.common import dask_cluster

    with dask_cluster(2, tmp_path_factory.mktemp("dask") / "cluster.log") as (address, _):
        yield address
