"""A run stopped from outside (issues 54 and 55): Ctrl-C or SIGTERM to the process group stops it in
seconds with one line, exit 130, nothing of it left; SIGKILL leaves no process behind. Each run here starts
Prefect's server as its child (no PREFECT_API_URL), as a user's first `hygiene run` does."""

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from .conftest import EXAMPLES, ROOT, prefect_env

pytestmark = pytest.mark.slow

INTERRUPTED = "hygiene: interrupted: nothing published; the previous dataset stays"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("interrupt-prefect")  # one database for the module: migrated once


def _run(step: str, out: Path, home: Path) -> tuple[subprocess.CompletedProcess, float]:
    """``hygiene run`` on the sample corpus with ``step`` (tests/fault_run.py), in a session of its own:
    its process group is the run's alone, as a terminal's foreground job is."""
    args = ["run", str(EXAMPLES), "--dataset-dir", str(out / "clean"), "--reports-dir", str(out / "reports")]
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "tests.fault_run", step, *args], env=prefect_env(home), cwd=ROOT,
        capture_output=True, text=True, timeout=300, start_new_session=True,
    )  # fmt: skip
    return proc, time.monotonic() - start


def _left_running(home: Path) -> list[str]:
    """Processes started with this Prefect home (the run's server, its workers) that still run."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if proc.environ().get("PREFECT_HOME", "").startswith(str(home)) and proc.status() != "zombie":
                found.append(" ".join(proc.info["cmdline"] or []))
        except psutil.Error:
            pass
    return found


def _leftovers(out: Path) -> list[str]:
    left = (p.name for p in out.rglob("*") if p.name.endswith((".partial", ".tmp")) or "records-" in p.name)
    return sorted(left)


@pytest.mark.parametrize("moment", ["cache entry", "gates", "report"])
def test_ctrl_c_stops_the_run_with_one_line_and_leaves_nothing(tmp_path, home, moment):
    proc, _ = _run(f"{moment}:SIGINT", tmp_path / "out", home)
    assert proc.returncode == 130, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1] == INTERRUPTED
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "clean").exists() and _leftovers(tmp_path / "out") == []
    assert _left_running(home) == []


def test_sigterm_stops_the_run_and_the_next_run_publishes(tmp_path, home):
    proc, _ = _run("gates:SIGTERM", tmp_path / "out", home)
    assert proc.returncode == 130 and proc.stderr.strip().splitlines()[-1] == INTERRUPTED, proc.stderr[-3000:]
    assert _left_running(home) == [] and _leftovers(tmp_path / "out") == []
    again, _ = _run("memo:SIGINT", tmp_path / "out", home)  # interrupted only after it published
    assert again.returncode == 130, again.stderr[-3000:]
    last = again.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"hygiene: interrupted: published \d{8}T\d{6}Z-\w+ before it stopped; .*", last), last
    assert (tmp_path / "out" / "clean" / "manifest.json").is_file()


@pytest.mark.parametrize("moment", ["cache entry", "gates", "report"])
def test_sigkill_of_the_run_leaves_no_process_behind(tmp_path, home, moment):
    proc, _ = _run(f"{moment}:SIGKILL", tmp_path / "out", home)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    deadline = time.monotonic() + 30  # the server's own shutdown, after its parent-death signal
    while _left_running(home) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _left_running(home) == []
