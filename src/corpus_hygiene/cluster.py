"""The local Dask cluster of ``--workers N``: made here, light to import, so that the CLI can start it
in a thread as soon as it has parsed its arguments (``local_cluster`` imports the flow and warms up in
that thread, then forks the workers from the CLI)."""

from __future__ import annotations

import gc
import logging
import multiprocessing
import sys
import threading
import time
from pathlib import Path

# Processes with one thread each: the per-file work is pure Python. No dashboard (bokeh is not
# installed): the scheduler's HTTP server (health, metrics) still starts, on a free port, not on 8787,
# where a second run's cluster warned that the port was taken.
CLUSTER_KWARGS = {
    "threads_per_worker": 1,
    "processes": True,
    "dashboard_address": None,
    "scheduler_kwargs": {"dashboard": False, "dashboard_address": ":0"},
}


def configure_distributed() -> None:
    """Set before a local cluster is made (its workers get this process's Dask config)."""
    import dask.config

    # distributed logs every scheduler/nanny step at INFO, and a race at cluster shutdown ("Batched Comm
    # Closed", CommClosedError) with a traceback, after the flow has finished: noise for a CLI user.
    logging.getLogger("distributed").setLevel(logging.WARNING)
    logging.getLogger("distributed.nanny").setLevel(logging.ERROR)  # its warnings: workers we close
    # Each worker samples the stacks of its threads every 10 ms for the dashboard's profile (no dashboard
    # here). Without it, 400 files on 2 workers took 5-10% less CPU (three alternating pairs: 43.4 vs
    # 46.6, 42.2 vs 44.1, 35.9 vs 40.4 CPU s).
    dask.config.set({"distributed.worker.profile.enabled": False})
    # prefect-dask logs "The Dask dashboard is available at <link>" when the link is not empty: with no
    # dashboard, the link led to a 404 on the CLI's console
    dask.config.set({"distributed.dashboard.link": ""})
    # Dask's housekeeping, in the scheduler (this process) and in every worker: an event-loop health
    # check every 20 ms, psutil samples for a dashboard every 0.5 s, the worker's memory every 0.1 s.
    # Two idle workers and their scheduler took 10-11% of a core with the defaults, 2.4% with these (20 s
    # each, psutil); on a 2-core machine that share came out of the per-file work. The memory limit is
    # still enforced, within a second.
    # The scheduler hands a worker thread its next task when it is free, not one ahead (the default
    # saturation, 1.1, gives a one-thread worker two): the last small batches go to whichever worker
    # is free first.
    dask.config.set({"distributed.scheduler.worker-saturation": 1.0})
    dask.config.set(
        {
            "distributed.admin.tick.interval": "1s",
            "distributed.admin.system-monitor.interval": "5s",
            "distributed.worker.memory.monitor-interval": "1s",
        }
    )
    _fork_workers_warm()


FORKSERVER_PRELOAD = ["distributed", "corpus_hygiene.worker_preload"]


def _fork_workers_warm() -> None:
    """Local workers are forked from a process that has done ``warm_up`` once (Python's forkserver,
    which Dask supports, with ``corpus_hygiene.worker_preload`` among its preloaded modules) rather
    than each started from scratch and warmed up on its own: two workers ready with 3.8 s of CPU
    instead of 6.0-6.9 s, while the flow and Prefect's server start on the same cores, and 137 MB
    instead of 477 MB of memory of their own (USS; the rest is shared with the forkserver). The
    forkserver starts with the first local cluster of this process, with its environment then;
    Prefect's settings reach the tasks with each task (Prefect serialises its settings context)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return  # not on this platform: workers are spawned and warm up each (local_cluster)
    import dask.config
    from distributed.utils import get_mp_context

    dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"})
    get_mp_context().set_forkserver_preload(FORKSERVER_PRELOAD)


OWNED: dict[str, object] = {}  # scheduler address -> a cluster made here (closing its workers is ours to do)
# held while a local cluster's workers start, and while the forkserver is found idle and stopped
_FORKSERVER_LOCK = threading.Lock()


def start_forkserver() -> bool:
    """Start the warm forkserver (``_fork_workers_warm``) now, in a process of its own, without importing
    Dask here: it imports and warms up on the core that this process leaves idle while it imports
    Prefect and the flow, and ``local_cluster(fork=False)`` then forks the workers from it ready. For a
    run beside a Prefect server that is up already (kept, or PREFECT_API_URL): with the CLI's own
    warm-up before forking, the flow began 2.95-3.46 s after the command (mean 3.20 s) and the runs
    took 13.51 s on average; with this, 2.25-2.65 s (mean 2.41 s) and 12.80 s (400 files,
    ``--workers 2``, long-lived server, five alternating runs each). False where there is no
    forkserver (the workers are spawned)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(FORKSERVER_PRELOAD)
    with _FORKSERVER_LOCK:
        forkserver.ensure_running()
    return True


def local_cluster(workers: int, fork: bool = True):
    """A local Dask cluster of ``workers`` processes, warmed up: each has run a small file through the
    per-file stage (``warm_up``: imports, language profiles, word lists, record checks, MinHash
    permutations), so that this happens while Prefect starts, not on the first batch of files.

    ``fork`` (on Linux; the CLI's cluster while Prefect's server starts): this process warms up and the
    workers are forked from it. The CLI imports the flow anyway, so the workers get its imports and
    warm-up without paying for them again: a forkserver started beside the CLI and a starting Prefect
    server imported and warmed up on the same two cores (the start is CPU-bound), and the flow began
    4.7-6.4 s after the command against 4.0-4.5 s forked from the CLI (400 files, ``--workers 2``,
    three alternating runs each). Forked while the CLI's other threads wait (for Prefect's server; the
    main thread for this cluster), after their imports are done. Else the start method
    ``configure_distributed`` sets (a warm forkserver, see ``_fork_workers_warm``): the CLI's cluster
    beside a server that is up (``start_forkserver`` started it early, on the idle core), and the
    clusters prefect-dask makes in a long-lived ``hygiene serve``, whose threads run flows. ``warm_up``
    runs in each worker all the same (forked warm, it only repeats what is loaded; spawned, where
    neither exists, it does the work)."""
    import dask.config
    from distributed import Client, LocalCluster

    configure_distributed()
    method = {}
    if fork and sys.platform.startswith("linux"):
        warm_up()
        method = {"distributed.worker.multiprocessing-method": "fork"}
    # the lock: the forkserver is not stopped under the new cluster's feet (stop_idle_forkserver)
    with _FORKSERVER_LOCK, dask.config.set(method):
        cluster = LocalCluster(n_workers=workers, **CLUSTER_KWARGS)
    with Client(cluster) as client:
        client.run(warm_up)
    OWNED[cluster.scheduler_address] = cluster
    return cluster


def close_idle_workers(client) -> bool:
    """Close the workers of a cluster made here, once the per-file stage is done: nothing after it
    runs on them, and they keep ~750 MB each after 1M records (caches, allocator fragmentation), which
    the global steps in the flow process can use. Before, they were restarted, and the two new worker
    processes starting up (~5 s at 1.3 cores) slowed the assemble step that ran beside them from 4.3
    to 7.1 s on the 100k corpus. Returns at once (the cluster closes them in the background); a
    cluster given by address is left alone."""
    cluster = OWNED.get(client.scheduler.address) if client is not None else None
    if cluster is None:
        return False
    client.run(_quiet_while_closing)
    cluster.scale(0)
    _stop_forkserver_when_idle()
    return True


def _stop_forkserver_when_idle(timeout: float = 120.0) -> None:
    """In the background: once the forkserver the workers came from has no child left (every worker
    closed, of any cluster of this process), stop it too. It holds the warm-up (~310 MB, 260 MB of
    it its own once the workers are gone) that the global steps can use; multiprocessing starts it
    again, preloaded as before, for the next cluster of a process that lives on (``hygiene serve``)."""

    def stop() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not stop_idle_forkserver():
            time.sleep(0.2)

    threading.Thread(target=stop, name="stop-forkserver", daemon=True).start()


def stop_idle_forkserver() -> bool:
    """Stop this process's forkserver unless a worker still runs from it; True when none runs after.
    The next local cluster starts a new one, which imports Prefect with the environment of then (the
    CLI calls this when the temporary server moved to another port). ``ForkServer._stop`` is how
    CPython's own tests stop it: it closes the server's lifeline, waits for its exit and clears the
    state under multiprocessing's lock (killing it instead raced with the next cluster's start: its
    first worker could connect to a server on its way out)."""
    from multiprocessing import forkserver

    import psutil  # with distributed

    server = forkserver._forkserver
    with _FORKSERVER_LOCK:  # a cluster starting now forks from it: its workers are children once started
        pid = getattr(server, "_forkserver_pid", None)
        if pid is None or not hasattr(server, "_stop"):
            return pid is None
        try:
            if psutil.Process(pid).children():
                return False
        except psutil.Error:
            pass  # gone already: _stop reaps it
        server._stop()
        return True


def _quiet_while_closing() -> None:
    # A worker's heartbeat can be under way when the scheduler retires it: the worker then logs
    # "Failed to communicate with scheduler during heartbeat" with a CommClosedError traceback, at
    # ERROR (dask/distributed#9032), on the console of a run that went well. Nothing it logs after
    # this point is about the run: the per-file results are gathered.
    logging.getLogger("distributed.worker").setLevel(logging.CRITICAL)


WARM_UP_FILE = (
    "ICLR 2026 Papers\n\nWe intro- duce a small model that tells the language of scientific abstracts, "
    "and we evaluate it on three corpora of conference papers.\n"
)


def warm_up() -> None:
    # (a worker runs ``process_files`` itself, not a Prefect task: neither Prefect's task engine nor the
    # flow module is imported for it)
    from corpus_hygiene.checks import load_policy
    from corpus_hygiene.models import SourceFile
    from corpus_hygiene.process import process_bytes
    from corpus_hygiene.record_checks import check_results

    # A small file through the whole per-file path, so that what it loads on first use is loaded here:
    # langdetect's profiles (0.39 s; a text under 40 letters is scored with word lists and never loads
    # them), the English word frequencies that rejoin split words (0.14 s), the record checks' schema
    # (0.13 s), lazy imports (0.16 s), the MinHash permutations. 20 files in a fresh process after the
    # warm-up took 2.06-3.16 s the first time and 1.38-2.07 s the second before; 1.47-1.90 and
    # 1.41-1.52 s now (three runs each); the warm-up itself takes ~0.7 s more.
    policy = load_policy()
    sample = WARM_UP_FILE.encode()
    result = process_bytes(
        SourceFile("warm-up.txt", Path("warm-up.txt"), len(sample)), sample, None, policy.dedup_config()
    )
    check_results([result], policy)
    # What is alive now lives as long as the process (modules, profiles, word lists, permutations: ~320k
    # objects, ~225k before the warm-up ran a file):
    # out of the cyclic collector's sight (gc_policy.py), the collections during the per-file work took
    # 0.17-0.27 s instead of 0.51-0.58 s per 200 files (gc.callbacks, five runs each).
    gc.freeze()
