"""One run per dataset: the lock beside the dataset folder, with another process holding it, killed
while holding it, and two real CLI runs started at once."""

import signal
import subprocess
import sys
import time

import pytest

from corpus_hygiene.publish.beside import Beside
from corpus_hygiene.publish.lock import DatasetBusy, dataset_lock

from .conftest import EXAMPLES

HOLDER = """
import sys, time
from corpus_hygiene.publish.lock import dataset_lock
with dataset_lock(sys.argv[1], "the test's holder"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _hold(dataset, seconds):
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(dataset), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_holder_is_refused_with_the_first_ones_name_until_it_is_killed(tmp_path):
    dataset = tmp_path / "data" / "clean"
    holder = _hold(dataset, 60)
    with pytest.raises(DatasetBusy, match=r"clean is being written by the test's holder; waited 0.5 s"):
        with dataset_lock(dataset, "second", wait_seconds=0.5):
            pass
    holder.send_signal(signal.SIGKILL)  # a crash releases the lock: the kernel drops it with the process
    holder.wait(timeout=30)
    with dataset_lock(dataset, "second"):
        assert Beside(dataset).lock.read_text() == "second"
    assert Beside(dataset).lock.read_text() == ""  # released, holder's name cleared


def test_a_waiting_run_gets_the_lock_when_the_holder_finishes(tmp_path):
    dataset = tmp_path / "clean"
    holder = _hold(dataset, 1.0)
    start = time.monotonic()
    with dataset_lock(dataset, "waiter", wait_seconds=30):
        assert time.monotonic() - start < 25
    holder.wait(timeout=30)


@pytest.mark.slow
def test_a_cli_run_is_refused_while_the_dataset_is_held_and_concurrent_runs_with_wait_both_publish(tmp_path):
    from corpus_hygiene.publish.read import verify_checksums

    from .test_e2e import run_hygiene, run_hygiene_async

    holder = _hold(tmp_path / "clean", 120)
    refused = run_hygiene(EXAMPLES, tmp_path, "--no-cache")
    assert refused.returncode == 1, refused.stderr[-2000:]
    (line,) = [x for x in refused.stderr.splitlines() if x.startswith("hygiene:")]
    assert line.startswith(f"hygiene: run failed: {tmp_path / 'clean'} is being written by the test's holder")
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    both = [run_hygiene_async(EXAMPLES, tmp_path, "--no-cache", "--wait", "300") for _ in range(2)]
    assert [p.wait(timeout=600) for p in both] == [0, 0]
    runs = sorted(p.name for p in (tmp_path / "reports").glob("*.metrics.json"))
    assert len(runs) == 2 and verify_checksums(tmp_path / "clean")["run_id"] in {
        r.split(".")[0] for r in runs
    }
