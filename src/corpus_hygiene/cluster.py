"""The local Dask cluster of ``--workers N``: made here, light to import, so that the CLI can start it
before it imports the flow (~4 s of imports run while the workers start)."""

from __future__ import annotations

import logging

# Processes with one thread each: the per-file work is pure Python.
CLUSTER_KWARGS = {"threads_per_worker": 1, "processes": True, "dashboard_address": None}


def quiet_distributed() -> None:
    # distributed logs every scheduler/nanny step at INFO, and a race at cluster shutdown ("Batched Comm
    # Closed", CommClosedError) with a traceback, after the flow has finished: noise for a CLI user.
    logging.getLogger("distributed").setLevel(logging.WARNING)
    logging.getLogger("distributed.nanny").setLevel(logging.ERROR)  # "Restarting worker": we asked it to


OWNED: set[str] = set()  # scheduler addresses of the clusters made here (restarting them is ours to do)


def local_cluster(workers: int):
    """A local Dask cluster of ``workers`` processes, warmed up: each has imported the per-file stage,
    loaded the language profiles and made the MinHash permutations (~5 s a process), so that this
    happens while Prefect starts, not on the first batch of files."""
    from distributed import Client, LocalCluster

    quiet_distributed()
    cluster = LocalCluster(n_workers=workers, **CLUSTER_KWARGS)
    with Client(cluster) as client:
        client.run(warm_up)
    OWNED.add(cluster.scheduler_address)
    return cluster


def restart_idle_workers(client) -> bool:
    """Restart the workers of a cluster made here, once the per-file stage is done: they keep ~750 MB
    each after 1M records (caches, allocator fragmentation; malloc_trim gives back ~50 MB), which the
    global steps in the flow process can use. A cluster given by address is left alone."""
    if client is None or client.scheduler.address not in OWNED:
        return False
    client.restart(wait_for_workers=False)
    return True


def warm_up() -> None:
    # the flow module and Prefect's task engine: what a worker imports to run its first task (the first
    # batch of a run took ~4 s longer than the next ones without this)
    import prefect.task_engine  # noqa: F401

    import corpus_hygiene.flows.hygiene  # noqa: F401
    from corpus_hygiene.checks import load_policy
    from corpus_hygiene.dedup.near import signature_of
    from corpus_hygiene.language import detect_language

    detect_language("a short text to load the language profiles")
    signature_of("a short text to make the permutations", load_policy().dedup_config())
