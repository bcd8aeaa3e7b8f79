"""The local Dask cluster of --workers N: its workers are closed once the per-file stage is done."""

import gc
import logging
import os
import time

import dask.config
import psutil
import pytest


def _worker_log_level() -> int:
    return logging.getLogger("distributed.worker").level


def _loaded_on_first_use() -> tuple[int, int]:
    from corpus_hygiene.clean import pdf
    from corpus_hygiene.language import _langdetect_factory

    return _langdetect_factory.cache_info().currsize, pdf._is_word.cache_info().currsize


def test_close_idle_workers_closes_the_workers_of_a_cluster_made_here_only():
    from distributed import Client, LocalCluster

    from corpus_hygiene.cluster import CLUSTER_KWARGS, close_idle_workers, local_cluster

    ours = local_cluster(1)
    other = LocalCluster(n_workers=1, **(CLUSTER_KWARGS | {"dashboard_address": ":0"}))  # as --dask-address
    try:
        with Client(ours) as client, Client(other) as theirs:
            assert len(client.scheduler_info()["workers"]) == 1
            # warmed up: what the per-file work imported is out of the cyclic collector's sight
            assert min(client.run(gc.get_freeze_count).values()) > 100_000
            # and what the first file would load: langdetect's profiles, the word lists of split words
            assert all(a == 1 and b > 0 for a, b in client.run(_loaded_on_first_use).values())
            # forked from this process once warm, not spawned and warmed up each
            assert set(client.run(os.getppid).values()) == {os.getpid()}
            assert dask.config.get("distributed.admin.tick.interval") == "1s"
            # a task a worker thread at a time: the next one waits in the scheduler, for whichever
            # worker is free first (Dask's default gives a one-thread worker two)
            slow = client.map(time.sleep, [0.3] * 4, pure=False)  # (queued: more than 2 a thread)
            assert _wait_until(lambda: len(ours.scheduler.queued) == 3, 5)
            client.gather(slow)
            levels = []
            scale = ours.scale
            ours.scale = lambda n: levels.append(client.run(_worker_log_level)) or scale(n)
            assert close_idle_workers(client)
            ours.scale = scale  # (the cluster's close calls it again, from its event loop)
            # quiet before the scale-down: a heartbeat cut by it logs a traceback at ERROR otherwise
            assert list(levels[0].values()) == [logging.CRITICAL]
            _wait_until(lambda: not client.scheduler_info()["workers"])
            assert client.scheduler_info()["workers"] == {}
            assert not close_idle_workers(theirs)
            assert len(theirs.scheduler_info()["workers"]) == 1
            assert not close_idle_workers(None)
    finally:
        ours.close()
        other.close()


def _forkservers() -> list:
    found = []
    for proc in psutil.Process().children():
        try:
            if "multiprocessing.forkserver" in " ".join(proc.cmdline()):
                found.append(proc)
        except psutil.Error:  # gone meanwhile
            pass
    return found


def _wait_until(condition, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    return condition()


def test_the_warm_forkserver_stops_with_the_last_worker_and_starts_again_for_the_next_cluster():
    from distributed import Client

    from corpus_hygiene.cluster import close_idle_workers, local_cluster

    for _ in range(2):  # the second cluster: multiprocessing starts the forkserver again, preloaded
        cluster = local_cluster(1, fork=False)  # as prefect-dask's clusters in `hygiene serve`
        try:
            with Client(cluster) as client:
                assert min(client.run(gc.get_freeze_count).values()) > 100_000
                assert all(a == 1 and b > 0 for a, b in client.run(_loaded_on_first_use).values())
                assert len(_forkservers()) == 1
                assert close_idle_workers(client)
                assert _wait_until(lambda: not _forkservers())
        finally:
            cluster.close()


def test_beside_a_server_that_is_up_the_cli_cluster_comes_from_a_forkserver_started_at_once(monkeypatch):
    """No server to start (kept, or PREFECT_API_URL): the workers' forkserver is started before the
    cluster (it imports and warms up on the idle core) and the workers come from it, warm; this process
    does not warm up for them."""
    from distributed import Client

    from corpus_hygiene import cli, cluster

    calls: list[str] = []
    start = cluster.start_forkserver
    monkeypatch.setattr(cluster, "start_forkserver", lambda: calls.append("start_forkserver") or start())
    monkeypatch.setattr(cluster, "warm_up", lambda: calls.append("warm_up in the CLI"))
    assert cluster.stop_idle_forkserver()  # none left by an earlier test
    with cli._local_runtime(2, None, server=None) as ready:
        with Client(ready()) as client:
            servers = {proc.pid for proc in _forkservers()}
            assert len(servers) == 1
            assert set(client.run(os.getppid).values()) == servers
            assert min(client.run(gc.get_freeze_count).values()) > 100_000
            assert all(a == 1 and b > 0 for a, b in client.run(_loaded_on_first_use).values())
    assert calls == ["start_forkserver"]
    assert _wait_until(cluster.stop_idle_forkserver)  # the workers closed with the runtime


@pytest.mark.parametrize("fork", [True, False])
def test_a_cluster_made_after_stop_idle_forkserver_has_the_environment_of_then(monkeypatch, fork):
    """The CLI's path when Prefect's temporary server moved to another port: workers forked from the
    forkserver of before would have the old PREFECT_API_URL in their environment (and their Prefect);
    the CLI's own cluster forks its workers from itself, when it is made."""
    from distributed import Client

    from corpus_hygiene.cluster import local_cluster, stop_idle_forkserver

    seen = []
    for mark in ("before", "after"):
        monkeypatch.setenv("CORPUS_HYGIENE_TEST_MARK", mark)
        assert stop_idle_forkserver()  # no worker runs from it: stopped (or none was running)
        cluster = local_cluster(1, fork=fork)
        try:
            with Client(cluster) as client:
                seen += client.run(os.getenv, "CORPUS_HYGIENE_TEST_MARK").values()
                assert not stop_idle_forkserver() or fork  # a worker runs from it: left alone
        finally:
            cluster.close()
    assert seen == ["before", "after"]


def test_batches_on_dask_come_back_in_input_order_and_leave_nothing_in_the_workers(tmp_path):
    from distributed import Client, LocalCluster, as_completed

    from corpus_hygiene.checks import load_policy
    from corpus_hygiene.flows.hygiene import gather_with_progress
    from corpus_hygiene.ingest import discover
    from corpus_hygiene.pipeline.process import process_files

    for i in range(6):
        text = (
            f"ICLR 2026 Papers\n\nAbstract number {i} describes a method for learning sparse representations "
            "of scientific text, and shows on three benchmarks that it matches dense baselines at a tenth "
            "of their memory while keeping the training time unchanged.\n"
        )
        (tmp_path / f"f{i}.txt").write_text(text, "utf-8")
    files = discover(tmp_path, 1 << 20).files
    groups = [files[:1], files[1:4], files[4:]]
    logger = logging.getLogger("test-gather")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        with Client(cluster) as client:
            futures = client.map(process_files, groups, policy=load_policy(), cache=None, pure=False)
            results = gather_with_progress(futures, logger, len(files), completed=as_completed)
            assert [r.source.source_file for r in results] == [f.rel_path for f in files]
            assert [r.records[0].text[:17] for r in results] == [f"Abstract number {i}" for i in range(6)]
            deadline = time.monotonic() + 10
            while cluster.scheduler.tasks and time.monotonic() < deadline:  # released as gathered
                time.sleep(0.05)
            assert not cluster.scheduler.tasks
