import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corpus_hygiene.cli import build_parser, main

from .conftest import EXAMPLES, ROOT

COMMANDS = sorted(build_parser()._subparsers._group_actions[0].choices)


def test_the_commands_are_the_ones_we_document():
    assert COMMANDS == ["run", "serve", "server", "validate"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_and_is_in_the_readme(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert len(capsys.readouterr().out) > 200
    readme = (ROOT / "README.md").read_text("utf-8")
    assert re.search(rf"`hygiene {command}\b", readme)


def test_installed_console_script_answers_help():
    hygiene = Path(sys.executable).with_name("hygiene")
    proc = subprocess.run([str(hygiene), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "run" in proc.stdout and "validate" in proc.stdout


def test_console_script_exits_with_the_commands_code_output_flushed_and_exit_handlers_run(tmp_path):
    # entry() leaves with os._exit (no teardown): what a normal exit guarantees must still hold
    marker = tmp_path / "handler-ran"
    script = (
        "import atexit, pathlib, sys\n"
        f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'yes')\n"
        "print('written before the run', end='')  # to a pipe: still in sys.stdout's buffer at exit\n"
        f"sys.argv = ['hygiene', 'validate', {str(tmp_path)!r}]\n"
        "from corpus_hygiene.cli import entry\n"
        "entry()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as by default
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 1  # validate's code for a folder without a dataset
    assert proc.stdout == "written before the run"
    assert proc.stderr.startswith(f"hygiene: invalid dataset: {tmp_path} has no manifest.json")
    assert marker.read_text() == "yes"


def test_readme_opens_with_the_two_commands():
    head = (ROOT / "README.md").read_text("utf-8")[:1200]
    assert "make run" in head and "make test" in head


def test_validate_reports_a_missing_dataset_in_one_line(tmp_path, capsys):
    assert main(["validate", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    expected = f"{tmp_path} has no manifest.json: not a published corpus-hygiene dataset"
    assert err == f"hygiene: invalid dataset: {expected}"


def test_validate_accepts_a_published_dataset(tmp_path, capsys):
    from corpus_hygiene.publish.dataset import publish

    from .test_dataset import _tables

    publish(tmp_path / "clean", "run-1", _tables(2), {"counts": {"kept": 2}})
    assert main(["validate", str(tmp_path / "clean")]) == 0
    assert (
        "run run-1, schema v1, 2 records; checksums match the manifest; every contract check passes"
        in capsys.readouterr().out
    )


def test_summary_lines_fit_one_screen():
    from corpus_hygiene.cli import summary_lines

    lines = summary_lines(
        {
            "quarantine_reasons": {f"r{i}": i for i in range(10)},
            "languages": {"en": 3},
            "fixes": {},
            "stage_seconds": {"assemble": 1.25},
            "files_from_cache": 4,
            "changes": {"added": 2, "removed": 1, "previous_run_id": "run-0"},
        }
    )
    assert lines == [
        "quarantine: r9 9, r8 8, r7 7, r6 6, r5 5, r4 4, … (4 more)",
        "languages:  en 3",
        "repairs:    none",
        "time:       assemble 1.2s",
        "cache:      4 unchanged files reused",
        "changes:    +2 / -1 records since run run-0",
    ]


def _precheck_with_four_cached(tmp_path, policy):
    """The example files, the first four with cache entries; the CLI's pre-check of a run on them."""
    import argparse

    from corpus_hygiene.incremental.file_cache import FileCache, cache_dir_for
    from corpus_hygiene.cli import _precheck
    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline.process import process_file

    files = discover(EXAMPLES, policy.max_file_bytes).files
    cache = FileCache(cache_dir_for(tmp_path / "clean"))
    for src in files[:4]:
        process_file(src, policy, cache)
    args = argparse.Namespace(input_dir=str(EXAMPLES), dataset_dir=str(tmp_path / "clean"), policy=None,
                              max_file_mb=None)  # fmt: skip
    return files, _precheck(args)


def test_precheck_counts_the_work_left_and_reads_the_cached_entries_ahead(tmp_path, policy):
    from corpus_hygiene import cache as cache_module

    files, check = _precheck_with_four_cached(tmp_path, policy)
    assert check.current is None  # nothing published yet
    assert check.todo_bytes == sum(f.size for f in files[4:])
    assert check.cached_bytes == sum(f.size for f in files[:4])
    try:
        assert check.read_ahead(lambda: False) == 4
    finally:
        cache_module._READ_AHEAD.clear()  # not taken by a flow in this test


@pytest.mark.skipif(sys.platform != "linux" or (os.cpu_count() or 1) < 2, reason="a forked child, a 2nd core")
def test_precheck_begins_the_new_files_as_the_flows_task_will_ask_for_them(tmp_path, policy):
    from corpus_hygiene import forked
    from corpus_hygiene.incremental.file_cache import FileCache, cache_dir_for
    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline.process import process_files

    files, check = _precheck_with_four_cached(tmp_path, policy)
    try:
        assert not check.begin(1)  # `--workers 1`: one process, nothing beside it
        assert check.begin(2)
        [(sources, *_)] = forked.arguments_ahead(process_files)
        assert [f.rel_path for f in sources] == [f.rel_path for f in files[4:]]
        # the arguments as process_files_task builds them from the flow's own discovery and cache folder
        flow_cache = FileCache(str(cache_dir_for(str(tmp_path / "clean"))))
        flow_files = discover(EXAMPLES, policy.max_file_bytes).files[4:]
        assert forked.begun_ahead(process_files, flow_files, policy, flow_cache)
        results = forked.call_in_fork(process_files, flow_files, policy, flow_cache)
        assert [r.source.source_file for r in results] == [f.rel_path for f in files[4:]]
        assert forked.arguments_ahead(process_files) == []  # taken
    finally:
        forked.drop_ahead()


def test_a_run_against_a_long_lived_server_sends_no_heartbeats_unless_the_user_set_them(monkeypatch):
    from prefect.settings import get_current_settings

    from corpus_hygiene.cli import _local_runtime

    before = get_current_settings().flows.heartbeat_frequency
    for name in ("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", "PREFECT_RUNNER_HEARTBEAT_FREQUENCY"):
        monkeypatch.delenv(name, raising=False)
    with _local_runtime(1, None, server=None) as ready:
        assert ready() is None  # no cluster
        assert get_current_settings().flows.heartbeat_frequency is None
    assert get_current_settings().flows.heartbeat_frequency == before
    monkeypatch.setenv("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", "60")  # the user's: theirs to keep
    with _local_runtime(1, None, server=None) as ready:
        ready()
        assert get_current_settings().flows.heartbeat_frequency == before


def test_while_the_temporary_server_starts_the_cli_warms_up_then_begins_the_new_files(monkeypatch):
    """One worker, the server still starting: the per-file and gates' warm-ups, then the new files'
    child (forked warm), then cache entries read until the server answers; its URL is the run's."""
    import threading

    from prefect.settings import get_current_settings

    from corpus_hygiene import cli, cluster
    from corpus_hygiene.checks import gates

    done: list[str] = []
    answered = threading.Event()

    class Starting:  # a temporary server that answers once the entries are being read
        def wait(self, timeout):
            answered.wait(30)
            return "http://127.0.0.1:9/api"

    def read_ahead(until):
        done.append("read_ahead")
        answered.set()
        while not until():
            time.sleep(0.01)
        return 0

    monkeypatch.setattr(cluster, "warm_up", lambda: done.append("warm_up"))
    monkeypatch.setattr(gates, "warm_up", lambda: done.append("gates.warm_up"))
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    with cli._local_runtime(1, None, read_ahead, Starting(), lambda: done.append("begin")) as ready:
        assert ready() is None
        assert get_current_settings().api.url == "http://127.0.0.1:9/api"
    assert done == ["warm_up", "gates.warm_up", "begin", "read_ahead"]


def test_the_server_spawned_before_the_precheck_is_stopped_when_there_is_nothing_to_do(
    tmp_path, monkeypatch, capsys
):
    from corpus_hygiene import cli
    from corpus_hygiene.local_server import TemporaryServer

    spawned = []
    real_spawn = TemporaryServer.spawn

    def spawn(self):
        spawned.append(self)
        return real_spawn(self)

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setattr(TemporaryServer, "spawn", spawn)
    process = None

    def precheck(args):
        nonlocal process
        process = spawned[0].process  # the server is starting while the pre-check runs
        assert os.environ["PREFECT_API_URL"] == spawned[0].api_url
        return cli._Precheck(current="20261203T000000Z-abcdef")

    monkeypatch.setattr(cli, "_precheck", precheck)
    assert main(["run", str(EXAMPLES), "--dataset-dir", str(tmp_path / "clean")]) == 0
    assert capsys.readouterr().out.startswith(f"unchanged: {tmp_path / 'clean'} (20261203T000000Z-abcdef)")
    assert process is not None and process.poll() is not None  # stopped, not left behind
    assert "PREFECT_API_URL" not in os.environ


def test_runs_on_the_temporary_server_send_no_flow_run_heartbeats():
    from prefect.settings import get_current_settings

    from corpus_hygiene.cli import _api_url

    before = get_current_settings().flows.heartbeat_frequency
    with _api_url("http://127.0.0.1:9/api"):
        settings = get_current_settings()
        assert settings.api.url == "http://127.0.0.1:9/api"
        assert settings.flows.heartbeat_frequency is None  # the engine then starts no heartbeat thread
    assert get_current_settings().flows.heartbeat_frequency == before


def test_arrow_defaults_fill_the_environment_and_leave_what_the_user_set():
    from corpus_hygiene.settings import ARROW_DEFAULTS, apply_arrow_defaults

    env: dict = {}
    apply_arrow_defaults(env)
    assert env == ARROW_DEFAULTS
    if sys.platform == "linux":
        assert env == {"ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}
    mine = {"ARROW_DEFAULT_MEMORY_POOL": "system"}
    apply_arrow_defaults(mine)
    assert mine == {"ARROW_DEFAULT_MEMORY_POOL": "system"}


@pytest.mark.parametrize(
    ("new_mb", "cached_mb", "env", "workers"),
    [
        (10, 100, None, 2),  # 100k corpus, 10% new: the workers share the new files
        (3, 100, None, 1),  # under 4 MB new: beside the cache reading, no cluster
        (10, 1000, None, 1),  # 1M corpus, 1% new: reading the rest takes longer than the new files
        (30, 1000, None, 2),  # 3% new: the new files take longer
        (10, 1000, "0", 2),  # the user's threshold wins: a cluster whatever is new
        (10, 100, "20", 1),
    ],
)
def test_a_cluster_starts_only_when_the_new_input_outweighs_reading_the_cached_rest(
    monkeypatch, capsys, new_mb, cached_mb, env, workers
):
    import argparse

    from corpus_hygiene.cli import _Precheck, _workers_for

    if env is None:
        monkeypatch.delenv("HYGIENE_CLUSTER_MIN_MB", raising=False)
    else:
        monkeypatch.setenv("HYGIENE_CLUSTER_MIN_MB", env)
    args = argparse.Namespace(workers=2, dask_address=None)
    check = _Precheck(todo_bytes=new_mb << 20, cached_bytes=cached_mb << 20)
    assert _workers_for(args, check) == workers
    err = capsys.readouterr().err
    if workers == 1:
        assert f"{new_mb:.1f} MB of new or changed input ({cached_mb:.1f} MB read from the cache)" in err
        assert "without starting 2 Dask workers" in err
    else:
        assert err == ""
