import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_hygiene.cli import build_parser, main

from .conftest import EXAMPLES

COMMANDS = sorted(build_parser()._subparsers._group_actions[0].choices)


def test_the_commands_are_the_ones_we_document():
    assert COMMANDS == ["run", "serve", "validate"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: hygiene {command} ")


def test_installed_console_script_answers_help():
    hygiene = Path(sys.executable).with_name("hygiene")
    proc = subprocess.run([str(hygiene), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "run" in proc.stdout and "validate" in proc.stdout


def test_validate_reports_a_missing_dataset_in_one_line(tmp_path, capsys):
    assert main(["validate", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    expected = f"{tmp_path} has no manifest.json: not a published corpus-hygiene dataset"
    assert err == f"hygiene: invalid dataset: {expected}"


def test_validate_accepts_a_published_dataset(tmp_path, capsys):
    from corpus_hygiene.publish.dataset import publish

    from .test_dataset import _tables

    counts = {"ingested": 3, "kept": 2, "duplicates": 0, "quarantined": 1}
    publish(tmp_path / "clean", "run-1", _tables(2), {"counts": counts})
    assert main(["validate", str(tmp_path / "clean")]) == 0
    assert (
        "run run-1, schema v3, 2 records; checksums match the manifest; every contract check passes"
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


def test_the_console_script_exits_with_validates_code_and_its_one_line(tmp_path):
    hygiene = Path(sys.executable).with_name("hygiene")
    proc = subprocess.run(
        [str(hygiene), "validate", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"hygiene: invalid dataset: {tmp_path} has no manifest.json")


CORES = len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workers", "0"], f"--workers must be 1 to {CORES}, the cores this machine gives us (got 0)"),
        (["--workers", "-1"], "(got -1)"),
        (["--workers", "1000"], "(got 1000)"),
        (["--workers", "2", "--dask-address", "tcp://127.0.0.1:8786"], "give one of them"),
        (["--max-file-mb", "-3"], "--max-file-mb must be a positive number of MB up to 2**40 (got -3)"),
        (["--max-file-mb", "nan"], "--max-file-mb must be a positive number of MB up to 2**40 (got nan)"),
        (["--max-file-mb", "inf"], "--max-file-mb must be a positive number of MB up to 2**40 (got inf)"),
        (["--wait", "nan"], "--wait must be 0 or more seconds (got nan)"),
        (["--reference", "no/such.parquet"], "--reference 'no/such.parquet': no such file or folder"),
        (["--wait", "inf"], "--wait must be 0 or more seconds (got inf)"),
    ],
)
@pytest.mark.parametrize("command", ["run", "serve"])
def test_a_wrong_command_line_exits_2_before_any_work(command, extra, message, capsys, tmp_path):
    cron = ["--cron", "* * * * *"] if command == "serve" else []
    out = ["--dataset-dir", str(tmp_path / "clean"), "--reports-dir", str(tmp_path / "reports")]
    with pytest.raises(SystemExit) as exit_info:
        main([command, str(EXAMPLES), *cron, *out, *extra])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize(
    ("dataset", "reports"),
    [("in/clean", "reports"), ("clean", "in/reports"), ("clean", "clean/reports"), ("in", "reports"),
     ("clean", "in/..")],
)  # fmt: skip
def test_folders_that_hold_one_another_exit_2_before_any_work(tmp_path, capsys, dataset, reports):
    (tmp_path / "in").mkdir()
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(tmp_path / "in"), "--dataset-dir", str(tmp_path / dataset),
              "--reports-dir", str(tmp_path / reports)])  # fmt: skip
    assert exit_info.value.code == 2
    assert "overlap: give folders apart" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["in"] and list((tmp_path / "in").iterdir()) == []


def test_a_dataset_version_folder_as_input_overlaps_the_dataset(tmp_path):
    from corpus_hygiene.publish.owner import overlap_problem

    (tmp_path / ".clean.versions" / "v1").mkdir(parents=True)
    version = tmp_path / ".clean.versions" / "v1"
    assert "overlap" in overlap_problem(version, tmp_path / "clean", tmp_path / "r")
    assert overlap_problem(tmp_path / ".clean2.versions", tmp_path / "clean", tmp_path / "r") is None
    assert overlap_problem(tmp_path / "in", tmp_path / "clean", tmp_path / "r") is None


@pytest.mark.parametrize("cron", ["61 * * * *", "every day", "* * *", "H * * * *"])
def test_a_bad_cron_exits_2_with_one_line_before_prefect_starts(tmp_path, capsys, cron):
    code = main(["serve", str(EXAMPLES), "--cron", cron, "--dataset-dir", str(tmp_path / "clean"),
                 "--reports-dir", str(tmp_path / "reports")])  # fmt: skip
    assert code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"hygiene: error: --cron {cron!r}: ")
    assert list(tmp_path.iterdir()) == []


def test_a_missing_input_folder_exits_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(tmp_path / "nope")])
    assert exit_info.value.code == 2
    assert f"input folder {str(tmp_path / 'nope')!r} does not exist" in capsys.readouterr().err


def test_run_and_serve_give_the_flow_the_same_parameters(tmp_path):
    from corpus_hygiene.command_line import flow_parameters

    common = [str(EXAMPLES), "--dataset-dir", str(tmp_path / "d"), "--workers", "2", "--no-cache"]
    common += [
        "--reference",
        "refs/a.parquet",
        "--reference",
        str(tmp_path),
        "--reference-text-column",
        "body",
    ]
    run = build_parser().parse_args(["run", *common])
    serve = build_parser().parse_args(["serve", *common, "--cron", "0 3 * * *"])
    assert (
        flow_parameters(run)
        == flow_parameters(serve)
        == {
            "input_dir": str(EXAMPLES),
            "dataset_dir": str(tmp_path / "d"),
            "reports_dir": str(Path("reports").absolute()),
            "policy_path": None,
            "max_file_mb": None,
            "use_cache": False,
            "workers": 2,
            "dask_address": None,
            "wait_seconds": 0.0,
            "references": [str(Path("refs/a.parquet").absolute()), str(tmp_path)],
            "reference_text_column": "body",
        }
    )


def test_defaults_fill_the_environment_and_leave_what_the_user_set():
    from corpus_hygiene.runtime import ARROW_DEFAULTS, PREFECT_DEFAULTS, apply_defaults

    env: dict = {"ARROW_DEFAULT_MEMORY_POOL": "system"}
    apply_defaults(environ=env)
    assert env["ARROW_DEFAULT_MEMORY_POOL"] == "system"
    assert env.keys() == (PREFECT_DEFAULTS | ARROW_DEFAULTS).keys()
    assert env["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"


@pytest.mark.parametrize("command", ["run", "serve"])
def test_a_wrong_policy_exits_2_with_one_line_before_prefect_starts(command, tmp_path):
    from checks import DEFAULT_POLICY_PATH

    policy = tmp_path / "policy.toml"
    policy.write_text(DEFAULT_POLICY_PATH.read_text("utf-8").replace("max_file_mb =", "max_fil_mb ="))
    cron = ["--cron", "* * * * *"] if command == "serve" else []
    argv = [command, str(EXAMPLES), *cron, "--policy", str(policy), "--dataset-dir", str(tmp_path / "clean")]
    script = (
        "import sys\nfrom corpus_hygiene.cli import main\n"
        f"try:\n    code = main({argv!r})\nexcept SystemExit as exc:\n    code = exc.code\n"
        "print(code, 'prefect' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["2", "False"]  # exit 2, and Prefect never imported
    assert (
        proc.stderr
        == f"hygiene: {policy}:6: [ingest] max_fil_mb: unknown key; did you mean max_file_mb? (and 1 more)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["policy.toml"]  # nothing written


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unwritable_folders_unreachable_schedulers_and_bad_prefect_settings_exit_2_at_once(
    tmp_path, capsys, monkeypatch
):
    (tmp_path / "a-file").write_text("")
    under_file = tmp_path / "a-file"  # nothing can be created under a regular file, root or not
    port = _free_port()
    silent = socket.create_server(("127.0.0.1", 0))  # the kernel completes connections; nothing speaks
    silent_port = silent.getsockname()[1]
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    cases = [
        (
            ["--dataset-dir", str(under_file / "clean")],
            f"--dataset-dir {str(under_file / 'clean')!r} cannot be",
        ),
        (
            ["--reports-dir", str(under_file / "r")],
            f"--reports-dir {str(under_file / 'r')!r} cannot be created",
        ),
        (
            ["--dask-address", f"tcp://127.0.0.1:{port}"],
            f"--dask-address tcp://127.0.0.1:{port}: nothing answers",
        ),
        (["--dask-address", "nonsense"], "--dask-address nonsense: it is not tcp://HOST:PORT"),
        # something listening that is not a scheduler: Dask's client would wait for its greeting forever
        (["--dask-address", f"tcp://127.0.0.1:{silent_port}"], "sent no Dask greeting in 3 s"),
    ]
    for extra, message in cases:
        with pytest.raises(SystemExit) as exit_info:
            main(["run", str(EXAMPLES), "--dataset-dir", str(tmp_path / "d"), *extra])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err, extra
    silent.close()
    monkeypatch.setenv("PREFECT_API_URL", "not-a-url")
    with pytest.raises(SystemExit):
        main(["run", str(EXAMPLES), "--dataset-dir", str(tmp_path / "d")])
    assert "PREFECT_API_URL='not-a-url' is not an http(s) URL" in capsys.readouterr().err
    monkeypatch.delenv("PREFECT_API_URL")
    monkeypatch.setenv("PREFECT_HOME", str(under_file / "prefect"))
    with pytest.raises(SystemExit):
        main(["run", str(EXAMPLES), "--dataset-dir", str(tmp_path / "d")])
    assert f"PREFECT_HOME {str(under_file / 'prefect')!r} cannot be created" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


@pytest.mark.slow
def test_a_failure_at_run_time_ends_in_one_line_and_exit_1_with_the_traceback_only_under_debug(tmp_path):
    (tmp_path / ".clean.versions").write_text("")  # a file where the run makes its versions folder
    args = [
        "run",
        str(EXAMPLES),
        "--dataset-dir",
        str(tmp_path / "clean"),
        "--reports-dir",
        str(tmp_path / "r"),
    ]
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    runs = {
        debug: subprocess.run(
            [sys.executable, "-m", "corpus_hygiene.cli", *debug, *args],
            env=env,
            capture_output=True,
            text=True,
        )
        for debug in ((), ("--debug",))
    }
    quiet, loud = runs[()], runs[("--debug",)]
    assert quiet.returncode == loud.returncode == 1
    (last,) = [line for line in quiet.stderr.splitlines() if line.startswith("hygiene:")]
    assert last.startswith("hygiene: run failed: not published: [Errno 17] File exists:")
    assert "Traceback" not in quiet.stdout + quiet.stderr and "Traceback" in loud.stderr
    assert not (tmp_path / "clean").exists() and (tmp_path / ".clean.versions").is_file()


def test_a_users_folder_as_dataset_dir_is_refused_before_any_work_and_left_alone(tmp_path, capsys):
    """A folder holding a manifest.json among the user's files is not a dataset of this tool's: refused
    with exit 2 and one line, every file as it was (it used to be adopted, then removed)."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "manifest.json").write_text('{"run_id": "x", "outputs": {}}')
    (mine / "thesis.tex").write_text("precious")
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(EXAMPLES), "--dataset-dir", str(mine), "--reports-dir", str(tmp_path / "r")])
    assert exit_info.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == f"hygiene: error: --dataset-dir {str(mine)!r} holds files this tool did not write; " + (
        "choose an empty or new --dataset-dir"
    )
    assert sorted(p.name for p in mine.iterdir()) == ["manifest.json", "thesis.tex"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


@pytest.mark.parametrize("kind", ["folder", "link"])
def test_a_lock_path_that_is_not_a_lock_file_is_refused_and_left_alone(tmp_path, capsys, kind):
    lock = tmp_path / ".clean.lock"
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    lock.mkdir() if kind == "folder" else lock.symlink_to(precious)
    with pytest.raises(SystemExit) as exit_info:
        out = ["--dataset-dir", str(tmp_path / "clean"), "--reports-dir", str(tmp_path / "r")]
        main(["run", str(EXAMPLES), *out])
    assert exit_info.value.code == 2
    assert f"{lock} is not a lock file this tool wrote" in capsys.readouterr().err
    assert precious.read_text() == "keep me" and not (tmp_path / "r").exists()


def _pipe(data: bytes) -> str:
    """A pipe holding ``data``, as the path a shell's ``<(…)`` gives."""
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    return f"/proc/self/fd/{read}"


def test_a_policy_given_as_a_pipe_is_read_once(tmp_path, capsys):
    from checks import DEFAULT_POLICY_PATH, load_policy
    from corpus_hygiene.command_line import policy_read_once

    text = DEFAULT_POLICY_PATH.read_bytes()
    kept = policy_read_once(_pipe(text))
    assert Path(kept).read_bytes() == text and load_policy(kept).sha256 == load_policy().sha256
    assert load_policy(kept).sha256 == load_policy(kept).sha256  # read again and again, unlike the pipe
    broken = _pipe(text.replace(b"num_perm = 128", b"num_perm = 7"))
    code = main(["run", str(EXAMPLES), "--dataset-dir", str(tmp_path / "d"), "--reports-dir",
                 str(tmp_path / "r"), "--policy", broken])  # fmt: skip
    assert code == 2
    assert "num_perm: Input should be greater than or equal to 16 (got 7)" in capsys.readouterr().err


def test_debug_goes_before_or_after_the_command_and_a_misspelt_option_shows_the_commands_usage(capsys):
    assert build_parser().parse_args(["validate", "x", "--debug"]).debug is True
    assert build_parser().parse_args(["--debug", "validate", "x"]).debug is True
    assert build_parser().parse_args(["validate", "x"]).debug is False
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(EXAMPLES), "--dataset-dirr", "x"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: hygiene run ") and "--max-file-mb" in err
    assert err.rstrip().endswith("hygiene run: error: unrecognized arguments: --dataset-dirr x")


def test_a_busy_dataset_is_said_at_once_before_prefect_starts(tmp_path):
    script = (
        "import sys, time\n"
        "from corpus_hygiene.cli import main\n"
        "from corpus_hygiene.publish.lock import dataset_lock\n"
        f"with dataset_lock({str(tmp_path / 'clean')!r}, 'run X (pid 1)'):\n"
        "    start = time.monotonic()\n"
        f"    code = main(['run', {str(EXAMPLES)!r}, '--dataset-dir', {str(tmp_path / 'clean')!r},\n"
        f"                 '--reports-dir', {str(tmp_path / 'reports')!r}, '--no-cache'])\n"
        "print(code, round(time.monotonic() - start, 1) < 5, 'prefect' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["1", "True", "False"], proc.stdout + proc.stderr
    assert f"{tmp_path / 'clean'} is being written by run X (pid 1); waited 0 s" in proc.stderr
