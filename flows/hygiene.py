"""The corpus-hygiene Prefect flow. Its body is the stage list:

discover → unchanged? → per-file work (cache hits read here; the rest in batches, in this process or on
Dask) → assemble (record checks, dedup; the near-duplicate search on the cluster of ``--dask-address``)
→ gates (staging the new version's Parquet) → publish → report.

Every stage is a plain function of ``corpus_hygiene``; this module only wires them. ``hygiene run``,
``hygiene serve`` and the prefect.yaml deployment all call ``hygiene_flow`` with the same parameters.
Large values go to tasks wrapped in ``quote``: Prefect otherwise walks every object in a task's
arguments looking for futures.
"""

from __future__ import annotations

import itertools
import os
import shutil
import time
from contextlib import ExitStack
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.logging import get_run_logger
from prefect.states import Completed, Failed
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import quote

from checks import PolicyError, load_policy
from corpus_hygiene.incremental.file_cache import FileCache, cache_dir_for
from corpus_hygiene.incremental.pair_memo import load_memo, memo_path, save_memo
from corpus_hygiene.incremental.run_key import current_version, hash_inputs, hashes_read, run_key
from corpus_hygiene.ingest import InputRootError, discover
from corpus_hygiene.pipeline.assemble import AccountingError, assemble
from corpus_hygiene.pipeline.batches import batches, label
from corpus_hygiene.pipeline.process import process_files
from corpus_hygiene.pipeline.staging import RecordStore, StagingError, pack_tables
from corpus_hygiene.publish.card import beside_the_tables
from corpus_hygiene.publish.changes import changes_since_previous
from corpus_hygiene.publish.dataset import (
    PublishError,
    StagedVersion,
    commit_or_publish,
    discard_partial,
    gate_and_stage,
    records_dir,
    remove_staged_records,
    sha256_file,
    stage_version,
    versions_dir,
)
from corpus_hygiene.publish.lock import DatasetBusy, dataset_lock, lock_path
from corpus_hygiene.publish.metrics import build_metrics, manifest_from_metrics
from corpus_hygiene.publish.owner import overlap_problem
from corpus_hygiene.report import write_reports
from corpus_hygiene.runinfo import new_run_id
from corpus_hygiene.runtime import return_freed_memory, trim_freed_memory
from flows.on_dask import (
    CLUSTER_MIN_BYTES,
    ClusterLost,
    ClusterSearch,
    Progress,
    dask_client,
    process_on_dask,
    use_dask,
)
from flows.outcome import RunOutcome, announce, publish_artifacts, summary_of

NO_CACHE_TASK = {"cache_policy": NO_CACHE}  # the per-file cache is ours (incremental/), keyed on content

discover_sources = task(name="discover_sources", **NO_CACHE_TASK)(discover)
assemble_dataset = task(name="assemble_dataset", **NO_CACHE_TASK)(assemble)


@task(name="process_files", task_run_name="process {name}", **NO_CACHE_TASK)
def process_batch(files: list, policy, cache: FileCache | None, name: str) -> list:
    return process_files(files, policy, cache)


check_gates_and_stage = task(name="check_gates_and_stage", **NO_CACHE_TASK)(gate_and_stage)


def _io_error(task, run, state) -> bool:
    return isinstance(state.result(raise_on_failure=False), OSError)


@task(name="publish_dataset", retries=2, retry_delay_seconds=1, retry_condition_fn=_io_error, **NO_CACHE_TASK)
def publish_dataset(dataset_dir: str, run_id: str, asm, metrics: dict, staged: StagedVersion | None) -> str:
    manifest = manifest_from_metrics(metrics)
    return str(
        commit_or_publish(dataset_dir, run_id, asm.tables(), manifest, beside_the_tables(metrics), staged)
    )


@task(name="write_report", **NO_CACHE_TASK)
def write_report(reports_dir: str, metrics: dict, asm) -> str:
    page = write_reports(reports_dir, metrics, asm.quarantine, asm.duplicates, asm.records)
    publish_artifacts(metrics, page)
    return str(page)


def log_once(logger, problems: list[str | None]) -> None:
    """The cache's problems (it is disposable: each means "recomputed") in one warning, not one a file."""
    if found := [p for p in problems if p]:
        more = f" (and {len(found) - 1} more like it)" if len(found) > 1 else ""
        logger.warning("%s%s", found[0], more)


def open_cache(dataset_dir: str, logger) -> FileCache | None:
    """The per-file cache beside the dataset; None (the run goes on without one) when its folder cannot
    be made, as on a read-only disk."""
    try:
        return FileCache(cache_dir_for(dataset_dir))
    except OSError as exc:
        logger.warning("no cache: %s (%s); every file is processed", cache_dir_for(dataset_dir), exc.strerror)
        return None


def process_all(
    files, cached: dict, todo: list, policy, cache: FileCache | None, client, timed, store: RecordStore
) -> list:
    """Every file's result, in ``files`` order, its records staged in ``store`` as its batch arrives:
    cache hits as read (``cached``), the rest (``todo``) processed in batches, on Dask when there is a
    ``client``."""
    if client is not None:
        fresh = timed("process_files", process_on_dask, client, todo, policy, cache, store)
    else:
        fresh, progress = [], Progress(get_run_logger(), len(todo))
        for group in batches(todo):
            batch = timed("process_files", process_batch, quote(group), policy, cache, label(group))
            batch = store.add(batch)
            fresh += batch
            progress.add(batch)
    done = cached | {r.source.source_file: r for r in fresh}
    return [done[f.rel_path] for f in files]


def stage_hits(hits, store, files: int = 64) -> dict:
    """The cache hits (``FileCache.hits``) by path, their records staged ``files`` files at a time."""
    staged, hits = {}, iter(hits)
    while group := list(itertools.islice(hits, files)):
        results, tables = zip(*group, strict=True)
        staged |= {r.source.source_file: r for r in store.add(pack_tables(list(results), list(tables)))}
    return staged


# A deployment's folders when its parameters leave them out (prefect.yaml does): the Prefect variable
# corpus_hygiene_<name>, else the environment variable CORPUS_HYGIENE_<NAME>, else the sample corpus
# layout under the working directory. Read when the run starts, so a changed variable needs no redeploy.
FOLDER_DEFAULTS = {"input_dir": "examples/corpus", "dataset_dir": "data/clean", "reports_dir": "reports"}


def folder(name: str, given: str | None) -> str:
    if given:
        return given
    from prefect.variables import Variable

    return (
        Variable.get(f"corpus_hygiene_{name}", default=None)
        or os.environ.get(f"CORPUS_HYGIENE_{name.upper()}")
        or FOLDER_DEFAULTS[name]
    )


@flow(name="corpus-hygiene", log_prints=True, task_runner=ThreadPoolTaskRunner(max_workers=1))
def hygiene_flow(
    input_dir: str | None = None,
    dataset_dir: str | None = None,
    reports_dir: str | None = None,
    policy_path: str | None = None,
    max_file_mb: float | None = None,
    use_cache: bool = True,
    workers: int = 1,
    dask_address: str | None = None,
    wait_seconds: float = 0.0,
):
    """``workers`` > 1: the per-file work on a local Dask cluster of that many processes, made for the
    stage and closed after it; ``dask_address``: on that Dask scheduler's workers, and the near-duplicate
    search there too (a full search; a re-run with the memo searches around its new texts, here).
    ``wait_seconds``: how long to wait for another run writing the same dataset (one at a time).
    Folders left out are read from Prefect variables or the environment (``folder``)."""
    return_freed_memory()  # here, not in the CLI: a deployment's runs start in Prefect's own process
    run_id = new_run_id()
    input_dir = folder("input_dir", input_dir)
    dataset_dir = folder("dataset_dir", dataset_dir)
    reports_dir = folder("reports_dir", reports_dir)
    beside = (lock_path(dataset_dir), cache_dir_for(dataset_dir), versions_dir(Path(dataset_dir)))
    ours = [p for p in beside if not os.path.lexists(p)]  # what this run creates beside the dataset
    try:
        with dataset_lock(dataset_dir, f"run {run_id} (pid {os.getpid()})", wait_seconds):
            remove_staged_records(dataset_dir)
            try:
                state = _hygiene(
                    run_id, input_dir, dataset_dir, reports_dir, policy_path, max_file_mb, use_cache, workers,
                    dask_address,
                )  # fmt: skip
            finally:
                remove_staged_records(dataset_dir)
    except DatasetBusy as exc:
        return Failed(message=str(exc), data=RunOutcome(run_id, False, str(exc)))
    except BaseException:  # Ctrl-C, SIGTERM: the version being staged goes with the run
        discard_partial(dataset_dir, run_id)
        raise
    if state.is_failed():  # a failed run leaves nothing of its own beside the dataset
        for path in ours:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    return state


def _hygiene(
    run_id: str,
    input_dir: str,
    dataset_dir: str,
    reports_dir: str,
    policy_path: str | None,
    max_file_mb: float | None,
    use_cache: bool,
    workers: int,
    dask_address: str | None,
):
    """The run itself, under the dataset's lock."""
    logger = get_run_logger()
    timings: dict[str, float] = {}

    def timed(stage: str, fn, *args):
        start = time.perf_counter()
        try:
            return fn(*args)
        finally:
            timings[stage] = round(timings.get(stage, 0.0) + time.perf_counter() - start, 3)

    def failed(message: str, metrics: dict | None = None, asm=None):
        page = None
        if metrics is not None:
            metrics["outcome"] = message
            try:
                page = write_report(reports_dir, quote(metrics), quote(asm))
            except OSError as exc:  # the failure is still told, on the terminal and in Prefect
                logger.warning("no report: %s (%s)", reports_dir, exc.strerror or exc)
        return Failed(message=message, data=RunOutcome(run_id, False, message, dataset_dir, page))

    try:
        policy = load_policy(policy_path)
        if problem := overlap_problem(input_dir, dataset_dir, reports_dir):
            return failed(problem)
        discovery = timed("discover", discover_sources, input_dir, policy.file_limit(max_file_mb))
        hashes = timed("hash_inputs", hash_inputs, discovery) if use_cache else {}
        current = use_cache and current_version(dataset_dir, run_key(discovery, hashes, policy), reports_dir)
        if current:
            message = f"unchanged: {dataset_dir} ({current}) already holds the output of these inputs"
            return Completed(message=message, data=RunOutcome(run_id, True, message, dataset_dir))
        cache = open_cache(dataset_dir, logger) if use_cache else None
        store = RecordStore(records_dir(dataset_dir, run_id))
        hits = cache.hits(discovery.files, hashes, policy.sha256) if cache else ()
        cached = timed("cache_lookup", stage_hits, hits, store)
        todo = [f for f in discovery.files if f.rel_path not in cached]
        with ExitStack() as cluster:
            client = None
            if use_dask(todo, workers, dask_address):
                client = cluster.enter_context(dask_client(workers, dask_address))
            elif workers > 1:
                logger.info(
                    "--workers %d: %.1f MB of new input, under the %d MB a local cluster's start pays for: "
                    "processed in this process", workers, sum(f.size for f in todo) / 2**20,
                    CLUSTER_MIN_BYTES >> 20,
                )  # fmt: skip
            results = process_all(discovery.files, cached, todo, policy, cache, client, timed, store)
            trim_freed_memory()  # the batches' and cache entries' buffers, freed among the results
            memo_file = memo_path(cache.folder, policy.dedup_config()) if cache else None
            memo = load_memo(memo_file) if memo_file else None
            log_once(logger, [*(cache.problems if cache else []), memo.problem if memo else None])
            # A full search goes to the cluster of --dask-address. A re-run with the memo searches only
            # around its new texts, here (a shuffle would move every row); a local cluster is closed
            # first: its workers' memory goes back to this machine for the global step.
            search = None
            if client is not None and dask_address and not (memo is not None and len(memo.indexed)):
                search = ClusterSearch(client, logger)
            else:
                cluster.close()
            asm = timed(
                "assemble",
                assemble_dataset,
                quote(results),
                discovery.refused,
                discovery.skipped,
                policy,
                quote(memo),
                quote(search),
                quote(store),
            )
    except (InputRootError, AccountingError, PolicyError, ClusterLost, StagingError) as exc:
        return failed(str(exc))

    trim_freed_memory()  # the search's buffers: the gates' slices come on top of what stays
    staged = stage_version(dataset_dir, run_id)
    checked = cache.checked_files(asm.sources, policy.sha256) if cache else frozenset()
    try:
        gates = timed(
            "gates", check_gates_and_stage, quote(asm), policy, quote(staged), quote(checked), store.folder
        )
    except StagingError as exc:  # the keys compared across rows could not be spilled
        if staged is not None:
            staged.discard()
        return failed(str(exc))
    metrics = build_metrics(
        run_id=run_id,
        input_dir=input_dir,
        dataset_dir=dataset_dir,
        asm=asm,
        policy=policy,
        stage_seconds=timings,
        outcome="published",
    )
    metrics["run_key"] = run_key(discovery, hashes_read(asm.sources), policy)
    metrics["gates"] = [{"name": g.name, "passed": g.passed, "detail": g.detail} for g in gates]
    metrics["changes"] = changes_since_previous(dataset_dir, asm.records, asm.quarantine)
    if broken := [g for g in gates if not g.passed]:
        if staged is not None:
            staged.discard()
        reasons = "; ".join(f"{g.name}: {g.detail}" for g in broken)
        outcome = failed(f"gate failed, nothing published: {reasons}", metrics, asm)
        announce("gate.failed", dataset_dir, metrics, outcome.data.report)
        return outcome
    metrics["stage_seconds"] = dict(timings)
    try:  # before the switch: a published version always has its report, and exit 1 keeps the old one
        page = write_report(reports_dir, quote(metrics), quote(asm))
    except OSError as exc:
        if staged is not None:
            staged.discard()
        return failed(f"not published: the report cannot be written to {reports_dir} ({exc.strerror or exc})")
    try:
        version = timed(
            "publish", publish_dataset, dataset_dir, run_id, quote(asm), quote(metrics), quote(staged)
        )
    except (PublishError, OSError) as exc:
        return failed(f"not published: {exc}", metrics, asm)
    if cache:
        cache.problems.clear()
        cache.after_publish(asm.sources, policy.sha256, sha256_file(Path(version) / "manifest.json"))
        log_once(logger, [*cache.problems, save_memo(memo_file, memo)])
    announce("dataset.published", dataset_dir, metrics, page)
    logger.info("published %s (%s); report %s", dataset_dir, Path(version).name, page)
    c = asm.counts
    message = (
        f"{c['ingested']} records from {c['files']} files: {c['kept']} kept, {c['duplicates']} duplicates, "
        f"{c['quarantined']} quarantined"
    )
    return Completed(
        message=message, data=RunOutcome(run_id, True, message, dataset_dir, page, c, summary_of(metrics))
    )
