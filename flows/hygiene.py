"""The corpus-hygiene Prefect flow. ``_stages`` is the stage list:

policy → discover → unchanged? → per-file work (cache hits read here; the rest in batches, in this
process or on Dask) → assemble (record checks, dedup; the near-duplicate search on the cluster of
``--dask-address``) → gates (staging the new version's Parquet) → metrics → report → publish.

Every stage is a plain function of ``corpus_hygiene`` or ``checks``; this module only wires them.
``hygiene run``, ``hygiene serve`` and the prefect.yaml deployment all call ``hygiene_flow`` with the same
parameters. Large values go to tasks wrapped in ``quote``: Prefect otherwise walks every object in a
task's arguments looking for futures.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.logging import get_run_logger
from prefect.states import Completed, Failed, State
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import quote
from prefect.variables import Variable

from checks import Policy, PolicyError, load_policy
from corpus_hygiene.incremental.file_cache import FileCache
from corpus_hygiene.incremental.pair_memo import load_memo, memo_path, save_memo
from corpus_hygiene.incremental.run_key import current_version, hash_inputs, hashes_read, run_key
from corpus_hygiene.ingest import InputRootError, discover
from corpus_hygiene.pipeline.assemble import AccountingError, Assembled, assemble
from corpus_hygiene.pipeline.batches import batches, label
from corpus_hygiene.pipeline.process import process_files
from corpus_hygiene.publish.beside import Beside, remove
from corpus_hygiene.publish.card import beside_the_tables
from corpus_hygiene.publish.changes import changes_since_previous
from corpus_hygiene.publish.dataset import (
    PublishError,
    commit_or_publish,
    gate_and_stage,
    sha256_file,
    staged_version,
)
from corpus_hygiene.publish.lock import DatasetBusy, dataset_lock
from corpus_hygiene.publish.metrics import build_metrics, manifest_from_metrics
from corpus_hygiene.publish.owner import overlap_problem
from corpus_hygiene.reference.index import IndexedReference, contamination_of, load_all
from corpus_hygiene.reference.source import Reference, ReferenceError, open_references
from corpus_hygiene.report import write_reports
from corpus_hygiene.runinfo import new_run_id
from corpus_hygiene.runtime import return_freed_memory, trim_freed_memory
from corpus_hygiene.store.records import RecordStore, StagingError, pack_tables
from flows.on_dask import ClusterLost, ClusterSearch, Progress, cluster_pays, dask_client, process_on_dask
from flows.outcome import RunOutcome, announce, publish_artifacts, summary_of

NO_CACHE_TASK = {"cache_policy": NO_CACHE}  # the per-file cache is ours (incremental/), keyed on content
# A stage's failure the run reports (exit 1, the report when there is one), not a crash.
STAGE_ERRORS = (InputRootError, AccountingError, PolicyError, ClusterLost, StagingError, ReferenceError)

discover_sources = task(name="discover_sources", **NO_CACHE_TASK)(discover)
assemble_dataset = task(name="assemble_dataset", **NO_CACHE_TASK)(assemble)
check_gates_and_stage = task(name="check_gates_and_stage", **NO_CACHE_TASK)(gate_and_stage)


@task(name="process_files", task_run_name="process {name}", **NO_CACHE_TASK)
def process_batch(files: list, policy, cache: FileCache | None, name: str) -> list:
    return process_files(files, policy, cache)


def _io_error(task, run, state) -> bool:
    return isinstance(state.result(raise_on_failure=False), OSError)


@task(name="publish_dataset", retries=2, retry_delay_seconds=1, retry_condition_fn=_io_error, **NO_CACHE_TASK)
def publish_dataset(dataset_dir: str, run_id: str, asm, metrics: dict, staged) -> str:
    manifest = manifest_from_metrics(metrics)
    return str(
        commit_or_publish(dataset_dir, run_id, asm.tables(), manifest, beside_the_tables(metrics), staged)
    )


@task(name="write_report", **NO_CACHE_TASK)
def write_report(reports_dir: str, metrics: dict, asm) -> str:
    page = write_reports(reports_dir, metrics, asm.quarantine, asm.duplicates, asm.records)
    publish_artifacts(metrics, page)
    return str(page)


class Stop(Exception):
    """A stage ends the run early with ``state``: a failure, or "unchanged"."""

    def __init__(self, state: State) -> None:
        super().__init__(state.message)
        self.state = state


@dataclass
class Run:
    """What every stage of one run shares: its id, folders, logger and stage timings."""

    run_id: str
    input_dir: str
    dataset_dir: str
    reports_dir: str
    logger: object
    timings: dict[str, float] = field(default_factory=dict)
    beside: Beside = field(init=False)  # the paths this run keeps beside the dataset

    def __post_init__(self) -> None:
        self.beside = Beside(self.dataset_dir)

    def timed(self, stage: str, fn, *args):
        start = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.timings[stage] = round(self.timings.get(stage, 0.0) + time.perf_counter() - start, 3)

    def failed(self, message: str, metrics: dict | None = None, asm=None) -> Stop:
        """The run's failure, told on the terminal and in Prefect, and by a report when there are metrics."""
        page = None
        if metrics is not None:
            try:
                page = write_report(self.reports_dir, quote(dict(metrics, outcome=message)), quote(asm))
            except OSError as exc:
                self.logger.warning("no report: %s (%s)", self.reports_dir, exc.strerror or exc)
        outcome = RunOutcome(self.run_id, False, message, self.dataset_dir, page)
        return Stop(Failed(message=message, data=outcome))


# A deployment's folders when its parameters leave them out (prefect.yaml does): the Prefect variable
# corpus_hygiene_<name>, else the environment variable CORPUS_HYGIENE_<NAME>, else the sample corpus
# layout under the working directory. Read when the run starts, so a changed variable needs no redeploy.
FOLDER_DEFAULTS = {"input_dir": "examples/corpus", "dataset_dir": "data/clean", "reports_dir": "reports"}


def folder(name: str, given: str | None) -> str:
    return (
        given
        or Variable.get(f"corpus_hygiene_{name}", default=None)
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
    references: list[str] | None = None,
    reference_text_column: str | None = None,
):
    """``workers`` > 1: the per-file work on a local Dask cluster of that many processes, made for the
    stage and closed after it; ``dask_address``: on that Dask scheduler's workers, and the near-duplicate
    search there too (a full search; a re-run with the memo searches around its new texts, here).
    ``wait_seconds``: how long to wait for another run writing the same dataset (one at a time).
    ``references``: datasets to check the run against, after the policy's (``reference/``), their text
    in ``reference_text_column`` (default: the policy's). Folders left out are read from Prefect
    variables or the environment (``folder``)."""
    return_freed_memory()  # here, not in the CLI: a deployment's runs start in Prefect's own process
    folders = (input_dir, dataset_dir, reports_dir)
    run = Run(new_run_id(), *map(folder, FOLDER_DEFAULTS, folders), get_run_logger())
    beside = run.beside
    ours = beside.absent()  # what this run creates beside the dataset
    try:
        with dataset_lock(run.dataset_dir, f"run {run.run_id} (pid {os.getpid()})", wait_seconds):
            beside.remove_staged_records()
            try:
                given = (references or [], reference_text_column)
                state = _stages(run, policy_path, max_file_mb, use_cache, workers, dask_address, given)
            except Stop as stop:
                state = stop.state
            finally:
                beside.remove_staged_records()
    except DatasetBusy as exc:
        return Failed(message=str(exc), data=RunOutcome(run.run_id, False, str(exc)))
    if state.is_failed():  # a failed run leaves nothing of its own beside the dataset
        remove(ours)
    return state


def _stages(
    run: Run, policy_path, max_file_mb, use_cache: bool, workers: int, dask_address, given: tuple
) -> State:
    """The run itself, under the dataset's lock; a stage that ends it early raises ``Stop``."""
    try:
        policy = load_policy(policy_path)
        if problem := overlap_problem(run.input_dir, run.dataset_dir, run.reports_dir):
            raise run.failed(problem)
        discovery = run.timed("discover", discover_sources, run.input_dir, policy.file_limit(max_file_mb))
        hashes = run.timed("hash_inputs", hash_inputs, discovery) if use_cache else {}
        named = policy.reference_paths() or given[0]  # a run without references has no stage of them
        refs = (
            run.timed("references", find_references, policy, *given, run.beside, use_cache) if named else []
        )
        if use_cache:
            stop_if_unchanged(run, run_key(discovery, hashes, policy, refs))
        cache = open_cache(run) if use_cache else None
        store = RecordStore(run.beside.records(run.run_id))
        with reference_folder(cache) as folder:
            indexed = run.timed("index_references", index_references, refs, policy, folder) if refs else []
            args = (discovery, hashes, policy, cache, store, workers, dask_address, indexed)
            asm, memo = process_and_assemble(run, *args)
        trim_freed_memory()  # the search's buffers: the gates' slices come on top of what stays
        with staged_version(run.dataset_dir, run.run_id) as staged:
            checked = cache.checked_files(asm.sources, policy.sha256) if cache else frozenset()
            args = (quote(asm), policy, quote(staged), quote(checked), store.folder)
            gates = run.timed("gates", check_gates_and_stage, *args)
            broken = "; ".join(f"{g.name}: {g.detail}" for g in gates if not g.passed)
            metrics = build_metrics(
                run_id=run.run_id, input_dir=run.input_dir, dataset_dir=run.dataset_dir, asm=asm,
                policy=policy, stage_seconds=run.timings, gates=gates,
                outcome=f"gate failed, nothing published: {broken}" if broken else "published",
                run_key=run_key(discovery, hashes_read(asm.sources), policy, refs),
                changes=changes_since_previous(run.dataset_dir, asm.records, asm.quarantine),
            )  # fmt: skip
            if broken:
                stop = run.failed(metrics["outcome"], metrics, asm)
                announce("gate.failed", run.dataset_dir, metrics, stop.state.data.report)
                raise stop
            page, version = report_and_publish(run, metrics, asm, staged)
    except STAGE_ERRORS as exc:
        raise run.failed(str(exc)) from exc
    if cache:
        cache.problems.clear()
        cache.after_publish(asm.sources, policy.sha256, sha256_file(Path(version) / "manifest.json"))
        memo_problem = save_memo(memo_path(cache.folder, policy.dedup_config()), memo)
        log_once(run.logger, [*cache.problems, memo_problem])
    announce("dataset.published", run.dataset_dir, metrics, page)
    run.logger.info("published %s (%s); report %s", run.dataset_dir, Path(version).name, page)
    c = asm.counts
    message = (
        f"{c['ingested']} records from {c['files']} files: {c['kept']} kept, {c['duplicates']} duplicates, "
        f"{c['quarantined']} quarantined"
    )
    outcome = RunOutcome(run.run_id, True, message, run.dataset_dir, page, c, summary_of(metrics))
    return Completed(message=message, data=outcome)


def stop_if_unchanged(run: Run, key: str) -> None:
    if current := current_version(run.dataset_dir, key, run.reports_dir):
        message = f"unchanged: {run.dataset_dir} ({current}) already holds the output of these inputs"
        raise Stop(Completed(message=message, data=RunOutcome(run.run_id, True, message, run.dataset_dir)))


def report_and_publish(run: Run, metrics: dict, asm: Assembled, staged) -> tuple[str, str]:
    """The report first: a published version always has its report, and a failure keeps the old one."""
    try:
        page = write_report(run.reports_dir, quote(metrics), quote(asm))
    except OSError as exc:
        why = exc.strerror or exc
        raise run.failed(f"not published: the report cannot be written to {run.reports_dir} ({why})") from exc
    try:
        version = run.timed(
            "publish", publish_dataset, run.dataset_dir, run.run_id, quote(asm), quote(metrics), quote(staged)
        )
    except (PublishError, OSError) as exc:
        raise run.failed(f"not published: {exc}", metrics, asm) from exc
    return page, version


def process_and_assemble(
    run: Run, discovery, hashes, policy: Policy, cache, store, workers, dask_address, references
):
    """Every file's result (cache hits staged as read, the rest processed in batches, on Dask when the
    run uses it), then the assembled tables; and the verified-pair memo the run updates."""
    hits = cache.hits(discovery.files, hashes, policy.sha256) if cache else ()
    cached = run.timed("cache_lookup", stage_hits, hits, store)
    todo = [f for f in discovery.files if f.rel_path not in cached]
    with ExitStack() as cluster:
        client, pays = None, bool(dask_address)
        if workers > 1 and not dask_address:
            pays, why = cluster_pays(sum(f.size for f in todo), workers)
            run.logger.info(why)
        if pays:
            client = cluster.enter_context(dask_client(workers, dask_address))
        results = process_all(run, discovery.files, cached, todo, policy, cache, client, store)
        trim_freed_memory()  # the batches' and cache entries' buffers, freed among the results
        memo = load_memo(memo_path(cache.folder, policy.dedup_config())) if cache else None
        log_once(run.logger, [*(cache.problems if cache else []), memo.problem if memo else None])
        # A full search goes to the cluster of --dask-address. A re-run with the memo searches only
        # around its new texts, here (a shuffle would move every row); a local cluster is closed
        # first: its workers' memory goes back to this machine for the global step.
        search = None
        if client is not None and dask_address and not (memo is not None and len(memo.indexed)):
            search = ClusterSearch(client, run.logger)
        else:
            cluster.close()
        args = (quote(results), discovery.refused, discovery.skipped, policy, quote(memo), quote(search))
        refs = (quote(references), contamination_of(policy.reference))
        return run.timed("assemble", assemble_dataset, *args, quote(store), *refs), memo


def process_all(run: Run, files, cached: dict, todo: list, policy, cache, client, store: RecordStore) -> list:
    """Every file's result, in ``files`` order, its records staged in ``store`` as its batch arrives:
    cache hits as read (``cached``), the rest (``todo``) processed in batches, on Dask when there is a
    ``client``."""
    if client is not None:
        fresh = run.timed("process_files", process_on_dask, client, todo, policy, cache, store)
    else:
        fresh, progress = [], Progress(run.logger, len(todo))
        for group in batches(todo):
            batch = run.timed("process_files", process_batch, quote(group), policy, cache, label(group))
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


@task(name="find_references", **NO_CACHE_TASK)
def find_references(
    policy: Policy, given: list[str], text_column: str | None, beside: Beside, use_cache: bool
) -> list[Reference]:
    """The policy's and the command line's references, hashed (with the cache, an unchanged file's
    hash is remembered in its ``references/``)."""
    memo = beside.cache / "references" / "hashes.json" if use_cache else None
    column = text_column or policy.reference["text_column"]
    return open_references(policy.reference_paths(), given, column, memo, beside.dataset)


@task(name="index_references", **NO_CACHE_TASK)
def index_references(refs: list[Reference], policy: Policy, folder: Path) -> list[IndexedReference]:
    return load_all(refs, policy.dedup_config(), contamination_of(policy.reference), folder)


@contextmanager
def reference_folder(cache: FileCache | None):
    """Where references are indexed: the cache's ``references/`` (an index is made once), else a
    temporary folder the run removes."""
    if cache is not None:
        yield cache.folder / "references"
        return
    with tempfile.TemporaryDirectory(prefix="corpus-hygiene-references-") as folder:
        yield Path(folder)


def open_cache(run: Run) -> FileCache | None:
    """The per-file cache beside the dataset; None (the run goes on without one) when its folder cannot
    be made, as on a read-only disk."""
    path = run.beside.cache
    try:
        return FileCache(path)
    except OSError as exc:
        run.logger.warning("no cache: %s (%s); every file is processed", path, exc.strerror)
        return None


def log_once(logger, problems: list[str | None]) -> None:
    """The cache's problems (it is disposable: each means "recomputed") in one warning, not one a file."""
    if found := [p for p in problems if p]:
        more = f" (and {len(found) - 1} more like it)" if len(found) > 1 else ""
        logger.warning("%s%s", found[0], more)
