"""The corpus-hygiene Prefect flow:
discover → process each file (mapped) → assemble (checks, dedup) → gates (which also write the new
version's Parquet files, not yet visible) → publish (commit: manifest, atomic switch) → report.

Thin on purpose: every stage is a plain function in ``corpus_hygiene``; this module only wires them,
times them, and turns expected failures into a Failed state with a one-line message. Large values
(the file results, the assembled tables, the metrics) go to tasks wrapped in ``quote``: Prefect
otherwise walks every object inside a task's arguments looking for upstream futures, which took
~30 s per task on 100k records.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from prefect import flow, task, unmapped
from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.logging import get_run_logger
from prefect.states import Completed, Failed
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import quote

from corpus_hygiene.assemble import AccountingError, Assembled, assemble
from corpus_hygiene.cache import FileCache, cache_dir_for
from corpus_hygiene.card import dataset_card, schema_json
from corpus_hygiene.changes import changes_since_previous
from corpus_hygiene.checks import Policy, PolicyError, load_policy
from corpus_hygiene.checks.gates import GateResult, evaluate_gates
from corpus_hygiene.checks.gates import warm_up as gates_warm_up
from corpus_hygiene.cluster import CLUSTER_KWARGS, close_idle_workers, configure_distributed
from corpus_hygiene.current import current_version, hash_inputs, run_key
from corpus_hygiene.dataset import PublishError, StagedVersion, arrow_slices, publish
from corpus_hygiene.dedup.memo import PairMemo, load_memo, memo_path, save_memo
from corpus_hygiene.forked import arguments_ahead, begun_ahead, beside, call_in_fork
from corpus_hygiene.gc_policy import freeze_alive, long_lived, release_long_lived
from corpus_hygiene.ingest import Discovery, InputRootError, discover
from corpus_hygiene.metrics import build_metrics, manifest_from_metrics
from corpus_hygiene.models import FileResult, SourceFile
from corpus_hygiene.process import process_files
from corpus_hygiene.report import write_reports
from corpus_hygiene.runinfo import new_run_id


@dataclass(frozen=True, slots=True)
class RunOutcome:
    run_id: str
    ok: bool
    message: str
    dataset_dir: str | None = None
    report: str | None = None
    counts: dict | None = None
    summary: dict | None = None  # what the CLI prints on one screen


@task(name="discover_sources", cache_policy=NO_CACHE)
def discover_sources(input_dir: str, max_bytes: int) -> Discovery:
    return discover(input_dir, max_bytes)


# Files go to tasks in batches of consecutive files: a task costs more than its work's share. A Prefect
# task costs ~0.15 CPU s besides its work (40 batches of one small file on a 2-worker local cluster:
# 6.0-6.9 CPU s as Prefect tasks, 0.44-0.64 s as plain Dask tasks, three rounds each, flow, workers and
# Prefect's server together: Prefect serialises its settings per task, rebuilds them in the worker, opens
# a client there (with a TLS context) and records the task run's events): on Dask the batches are plain
# Dask tasks (``_submit``). The record checks still cost ~18 ms a batch (pandera, once a call). At most
# 64 files a batch gave the 100k benchmark corpus 36 tasks; this gives it 17 (23 on Dask, below).
BATCH_BYTES = 16 << 20  # at most: a task's results are held by its worker until gathered
BATCH_FILES = 256
MIN_BATCH_BYTES = 1 << 20  # at least (unless fewer are left): ~1 s of work on one core
# on Dask, where a batch costs a few ms more than its work: the last batches ~0.2 s each, so that the
# workers finish together. 100k corpus, two workers (each batch's start and end in the workers, two runs
# each): one worker's last batch ended 0.52 and 0.59 s after the other's with 17 batches (1 MB), 0.02 and
# 0.00 s with these 23 (the scheduler also holds back each next batch: ``cluster.configure_distributed``)
MIN_DASK_BATCH_BYTES = 256 << 10


def batches(
    files: list[SourceFile],
    workers: int = 1,
    max_bytes: int = BATCH_BYTES,
    max_files: int = BATCH_FILES,
    min_bytes: int = MIN_BATCH_BYTES,
) -> list[list[SourceFile]]:
    """Consecutive files in batches that shrink towards the end (guided scheduling): each takes
    1/(2 × ``workers``) of the bytes still left, within ``min_bytes``..``max_bytes``, at most
    ``max_files`` files (a larger file alone). Few batches, and short last ones, so that the workers
    finish together: on the 100k corpus the last two of 17 ended 0.37-0.54 s apart (three runs; with
    36 batches of at most 64 files 0.3-3.3 s; on Dask, with ``MIN_DASK_BATCH_BYTES``, 0.00-0.02 s).

    >>> from pathlib import Path
    >>> files = [SourceFile(str(i), Path(str(i)), 10) for i in range(12)]
    >>> [len(b) for b in batches(files, 2, max_bytes=40, min_bytes=20)]
    [3, 2, 2, 2, 2, 1]
    >>> [len(b) for b in batches(files, 1, max_bytes=40, min_bytes=20)]
    [4, 4, 2, 2]
    >>> [len(b) for b in batches(files, 2, max_bytes=40, max_files=2, min_bytes=20)]
    [2, 2, 2, 2, 2, 2]
    >>> big = [SourceFile("big", Path("big"), 500)]
    >>> [len(b) for b in batches(files[:2] + big + files[2:], 1, max_bytes=40, min_bytes=20)]
    [2, 1, 4, 3, 2, 1]
    """
    out: list[list[SourceFile]] = []
    left, i = sum(f.size for f in files), 0
    while i < len(files):
        target = min(max_bytes, max(min_bytes, left / (2 * workers)))
        batch, size = [files[i]], files[i].size
        i += 1
        while i < len(files) and len(batch) < max_files and size + files[i].size <= target:
            batch.append(files[i])
            size, i = size + files[i].size, i + 1
        out.append(batch)
        left -= size
    return out


def _dask_client():
    from prefect.context import FlowRunContext

    return getattr(getattr(FlowRunContext.get(), "task_runner", None), "client", None)


def _parallelism(client) -> int:
    """How many tasks the Dask cluster of ``client`` runs at once: its workers' threads."""
    return sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()) or 1


@task(name="process_files", cache_policy=NO_CACHE, task_run_name="process {label}")
def process_files_task(
    sources: list[SourceFile], policy: Policy, cache_dir: str | None, label: str, forked: bool = False
) -> list:
    """``forked``: in a child forked from this process (``forked.call_in_fork``), this task's thread
    waiting."""
    cache = FileCache(cache_dir) if cache_dir else None
    if forked:
        if begun_ahead(process_files, sources, policy, cache):
            get_run_logger().info("%s: begun by the CLI in a forked process while Prefect started", label)
        return call_in_fork(process_files, sources, policy, cache)
    return process_files(sources, policy, cache)


def _submit(files: list[SourceFile], policy: Policy, cache_dir: str | None, client=None) -> list:
    """The per-file work over ``files``, in batches (``batches``); their futures. On the flow's Dask
    cluster (``client``, the flow's ``_dask_client()``) each batch is a plain Dask task
    (``process_files`` itself: no Prefect task run in the workers, see above; the flow shows the stage
    as one task, ``process_files_on_dask``); without one, a Prefect task a batch in this process."""
    if not files:
        return []
    if client is not None:
        groups = batches(files, _parallelism(client), min_bytes=MIN_DASK_BATCH_BYTES)
        cache = FileCache(cache_dir) if cache_dir else None
        return client.map(process_files, groups, policy=policy, cache=cache, pure=False)
    groups = batches(files)
    labels = [f"{g[0].rel_path}" + (f" and {len(g) - 1} more" if len(g) > 1 else "") for g in groups]
    return list(
        process_files_task.map(groups, policy=unmapped(policy), cache_dir=unmapped(cache_dir), label=labels)
    )


def _submit_beside(
    cache: FileCache,
    files: list[SourceFile],
    hashes: dict,
    policy: Policy,
    cache_dir: str,
    processes: int,
    logger,
) -> tuple[list[SourceFile], list]:
    """Without Dask workers but with a second core: the files without a cache entry go to one task that
    processes them in a forked child while this process reads the other files' entries. Nothing when
    every file or none has an entry (nothing to do beside), or ``forked.beside`` says no. The CLI may
    have begun that child already (``forked.start_ahead``, same arguments): the task takes its result."""
    todo = cache.missing(files, hashes, policy.sha256)
    if ahead := {src.rel_path for args in arguments_ahead(process_files) for src in args[0]}:
        # files begun ahead are new to this run even once that child has stored their entries
        todo_paths = ahead | {src.rel_path for src in todo}
        todo = [src for src in files if src.rel_path in todo_paths]
    if not beside(len(todo), len(files), processes):
        return [], []
    logger.info(
        "process_files: %d new or changed files in a forked process while %d cache entries are read",
        len(todo),
        len(files) - len(todo),
    )
    label = f"{todo[0].rel_path}" + (f" and {len(todo) - 1} more" if len(todo) > 1 else "") + " (forked)"
    return todo, [process_files_task.submit(todo, policy, cache_dir, label, forked=True)]


@task(name="assemble_dataset", cache_policy=NO_CACHE)
def assemble_dataset(
    results: list[FileResult], discovery: Discovery, policy: Policy, memo: PairMemo | None
) -> Assembled:
    return assemble(results, discovery.refused, discovery.skipped, policy, memo)


@task(name="check_gates", cache_policy=NO_CACHE)
def check_gates(
    asm: Assembled,
    policy: Policy,
    staged: StagedVersion | None = None,
    checked_before: frozenset[str] = frozenset(),
) -> list[GateResult]:
    """The gates, a slice of each table at a time (pandas copies of every text of a 1M-record table
    would be ~2 GB more). With ``staged``, each slice the gates read is also written to the new
    version's Parquet file: the rows are converted to Arrow once, not once for the gates and once for
    publishing (0.8-2.3 s for the 100k corpus's tables, measured), and the file is written while the
    gates run. ``checked_before``: source files whose rows an earlier published run validated
    (``evaluate_gates``)."""
    tables = asm.tables()
    if staged is not None:
        try:
            frames = {name: staged.write_slices(name, rows) for name, rows in tables.items()}
            return evaluate_gates(asm.counts, frames, policy, checked_before)
        except OSError:  # writing failed (the disk): the gates alone; publishing writes the tables again
            staged.discard()
    frames = {name: arrow_slices(rows, name) for name, rows in tables.items()}
    return evaluate_gates(asm.counts, frames, policy, checked_before)


def _checked_before(cache_dir: str | None, asm: Assembled, policy: Policy) -> frozenset[str]:
    """The files read from the cache whose rows a published run validated (``FileCache.CHECKED``)."""
    if not cache_dir:
        return frozenset()
    cache = FileCache(cache_dir)
    checked = cache.contract_checked()
    return frozenset(
        s.source_file
        for s in asm.sources
        if s.cached and s.sha256 and cache.key(s.source_file, s.sha256, policy.sha256) in checked
    )


def _staging(dataset_dir: str, run_id: str) -> StagedVersion | None:
    try:
        return StagedVersion(dataset_dir, run_id)
    except (PublishError, OSError):  # the folder cannot take a new version: publishing says why, later
        return None


def _io_error(task, run, state) -> bool:
    return isinstance(state.result(raise_on_failure=False), OSError)


@task(
    name="publish_dataset",
    cache_policy=NO_CACHE,
    retries=2,
    retry_delay_seconds=1,
    retry_condition_fn=_io_error,
)
def publish_dataset(
    dataset_dir: str, run_id: str, asm: Assembled, metrics: dict, staged: StagedVersion | None = None
) -> str:
    """Commit the version the gates staged; or, without one (or on a retry), write it all again."""
    extra = {"schema.json": schema_json(), "README.md": dataset_card(metrics)}
    manifest = manifest_from_metrics(metrics)
    if staged is not None and staged.open:
        try:
            return str(staged.commit(manifest, extra_files=extra))
        except OSError:
            staged.discard()  # a retry writes the version from the rows
            raise
    return str(publish(dataset_dir, run_id, asm.tables(), manifest, extra_files=extra))


@task(name="write_report", cache_policy=NO_CACHE)
def write_report(reports_dir: str, metrics: dict, asm: Assembled) -> str:
    page = write_reports(reports_dir, metrics, asm.quarantine, asm.duplicates, asm.records)
    publish_artifacts(metrics, page)
    return str(page)


def publish_artifacts(metrics: dict, page: Path) -> None:
    """What a scheduled run shows in the Prefect UI: a summary, a link to the report, the reasons."""
    c = metrics["counts"]
    gates = ", ".join(f"{g['name']} {'pass' if g['passed'] else 'FAIL'}" for g in metrics.get("gates", []))
    create_markdown_artifact(
        markdown=(
            f"# corpus-hygiene run `{metrics['run_id']}`\n\n**{metrics['outcome']}**\n\n"
            f"| ingested | kept | duplicates | quarantined |\n|---|---|---|---|\n"
            f"| {c['ingested']} | {c['kept']} | {c['duplicates']} | {c['quarantined']} |\n\n"
            f"Gates: {gates or 'not evaluated'}\n\nReport: `{page.resolve()}`\n"
        ),
        key="corpus-hygiene-summary",
        description="Outcome and counts of this run",
    )
    create_link_artifact(
        link=page.resolve().as_uri(), link_text="HTML quality report", key="corpus-hygiene-report"
    )
    create_table_artifact(
        table=[{"reason": k, "rows": v} for k, v in metrics["quarantine_reasons"].items()]
        or [{"reason": "-", "rows": 0}],
        key="corpus-hygiene-quarantine",
        description="Quarantined rows per reason",
    )


def gather_with_progress(
    futures: list, logger, total_files: int, every_seconds: float = 10.0, completed=as_completed
) -> list[FileResult]:
    """Results in input order (each future gives a batch), logging progress (files, records, rate).
    ``completed``: the futures in the order they finish (Prefect's ``as_completed``, or Dask's)."""
    index = {id(f): i for i, f in enumerate(futures)}
    results: list[list[FileResult]] = [[] for _ in futures]
    start = last = time.perf_counter()
    done = files = records = 0
    for future in completed(futures):
        batch = future.result()
        results[index[id(future)]] = batch
        _release(future)
        freeze_alive()  # the results so far live to the end of the run: later collections skip them
        done += 1
        files += len(batch)
        records += sum(r.source.n_paragraphs for r in batch)
        now = time.perf_counter()
        if now - last >= every_seconds or done == len(futures):
            last = now
            logger.info(
                "process_files: %d/%d files, %d paragraphs, %.0f paragraphs/s",
                files,
                total_files,
                records,
                records / max(now - start, 1e-9),
            )
    return [r for batch in results for r in batch]


@task(
    name="process_files_on_dask", cache_policy=NO_CACHE, task_run_name="process {total_files} files on Dask"
)
def gather_from_dask(futures: list, total_files: int) -> list[FileResult]:
    """The per-file stage on Dask as one task run of the flow (its batches are Dask tasks, ``_submit``):
    it waits here, in the flow's process, for the workers' results, and logs the progress."""
    from distributed import as_completed as dask_as_completed  # imported already: there is a client

    def completed(futures: list):
        return dask_as_completed(futures, loop=futures[0].client.loop) if futures else iter(())

    return gather_with_progress(futures, get_run_logger(), total_files, completed=completed)


def _release(future) -> None:
    """A Dask worker keeps a task's result in its memory while a future refers to it; once gathered
    here, the workers' copies are not needed (at 1M records they would double the memory of the run)."""
    if hasattr(future, "release"):  # a Dask future (``_submit``); a Prefect task's runs in this process
        future.release()


def one_at_a_time() -> ThreadPoolTaskRunner:
    """The flow's tasks one after another, in its process: the work is pure Python under one GIL, and
    Prefect's default pool of threads (unbounded) only made the files fight over it (5k abstracts: 38 s
    threaded) and held every batch in memory at once. The flow's own runner (what `prefect deploy` runs,
    prefect.yaml) and ``with_task_runner``'s for one worker."""
    return ThreadPoolTaskRunner(max_workers=1)


def with_task_runner(flow_fn, workers: int = 1, address: str | None = None):
    """The flow with its per-file tasks on Dask: the scheduler at ``address`` (see ``local_cluster``),
    or a LocalCluster of ``workers`` processes made by prefect-dask; one worker: in this process."""
    if address is None and workers <= 1:  # one worker: tasks one after another, in this process
        return flow_fn.with_options(task_runner=one_at_a_time())
    from prefect_dask import DaskTaskRunner

    if address:
        return flow_fn.with_options(task_runner=DaskTaskRunner(address=address))
    configure_distributed()
    return flow_fn.with_options(
        task_runner=DaskTaskRunner(cluster_kwargs=CLUSTER_KWARGS | {"n_workers": workers})
    )


@flow(name="corpus-hygiene", log_prints=True, task_runner=one_at_a_time())
def hygiene_flow(
    input_dir: str,
    dataset_dir: str = "data/clean",
    reports_dir: str = "reports",
    policy_path: str | None = None,
    max_file_mb: float | None = None,
    use_cache: bool = True,
    local_processes: int = 1,
):
    """``local_processes``: processes the run may use without Dask workers (the CLI passes
    ``--workers N`` when it found too little new input to start a cluster): with 2 or more, a re-run's
    new files are processed in a forked process while the cache entries of the others are read."""
    try:
        return _hygiene(
            input_dir, dataset_dir, reports_dir, policy_path, max_file_mb, use_cache, local_processes
        )
    finally:
        release_long_lived()  # the run's data was frozen out of the collector's sight (gc_policy.py)


def _hygiene(
    input_dir: str,
    dataset_dir: str,
    reports_dir: str,
    policy_path: str | None,
    max_file_mb: float | None,
    use_cache: bool,
    local_processes: int,
):
    logger = get_run_logger()
    run_id = new_run_id()
    timings: dict[str, float] = {}

    def timed(stage: str, fn, *args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            timings[stage] = round(timings.get(stage, 0.0) + time.perf_counter() - start, 3)

    def failed(message: str, metrics: dict | None = None, asm: Assembled | None = None):
        if metrics is not None:
            metrics["outcome"] = message
            write_report(reports_dir, quote(metrics), quote(asm))
        return Failed(message=message, data=RunOutcome(run_id, False, message))

    try:
        policy = load_policy(policy_path)
        max_bytes = int(max_file_mb * 1024 * 1024) if max_file_mb else policy.max_file_bytes
        discovery = timed("discover", discover_sources, input_dir, max_bytes)
        cache_dir = str(cache_dir_for(dataset_dir)) if use_cache else None
        cached: dict[str, FileResult] = {}
        memo = memo_file = None
        todo: list[SourceFile] = []  # the files the per-file tasks process
        futures: list = []
        submitted: set[str] = set()  # files processed or read from the cache
        forked = False  # the files without an entry go to a forked child (``_submit_beside``)
        client = _dask_client()  # the flow's Dask cluster, if it has one (``with_task_runner``)

        if use_cache:
            hashes = timed("hash_inputs", hash_inputs, discovery)
            current = current_version(dataset_dir, run_key(discovery, hashes, policy))
            if current is not None:
                message = f"unchanged: {dataset_dir} ({current}) already holds the output of these inputs"
                logger.info("%s; nothing to do", message)
                return Completed(message=message, data=RunOutcome(run_id, True, message, dataset_dir))
            cache = FileCache(cache_dir)
            if client is not None:
                # the workers process the files without an entry while this process reads the others'
                # entries (100k corpus, 11 MB new: 14.6-15.9 s against 19.8-20.7 s in-process). Where
                # the reading takes longer than the new files, the CLI starts no cluster and the next
                # branch takes them (``cli.cluster_min_bytes``: 1M corpus, 10 MB new)
                todo = cache.missing(discovery.files, hashes, policy.sha256)
                futures = _submit(todo, policy, cache_dir, client)
            elif local_processes > 1:
                todo, futures = _submit_beside(
                    cache, discovery.files, hashes, policy, cache_dir, local_processes, logger
                )
                forked = bool(futures)
            submitted = {f.rel_path for f in todo}
            # Cache hits are read here: a task run per unchanged file costs more than reading its entry.
            with long_lived():
                rest = [f for f in discovery.files if f.rel_path not in submitted]
                cached = timed("cache_lookup", cache.hits, rest, hashes, policy.sha256)
                memo_file = memo_path(cache_dir, policy.dedup_config())
                memo = timed("cache_lookup", load_memo, memo_file)
            submitted |= cached.keys()
        more = [f for f in discovery.files if f.rel_path not in submitted]  # damaged entries too
        todo, futures = todo + more, futures + _submit(more, policy, cache_dir, client)
        if futures and (client is not None or (forked and not more)):
            # this process only waits for the workers or the forked child now: it makes the gates' first
            # validation here rather than in the gates (once a process: a one-worker run beside a
            # server starting did it then). 1%-new re-runs of the 100k corpus on a kept server: gates
            # 1.3-1.4 s before, 1.0 s since (three runs each)
            gates_warm_up()
        if futures and client is not None:
            fresh = timed("process_files", gather_from_dask, quote(futures), len(todo))
        else:
            fresh = timed("process_files", gather_with_progress, futures, logger, len(todo))
        if futures and close_idle_workers(client):
            logger.info("per-file stage done: the local Dask workers closed to give back their memory")
        done = {**cached, **{r.source.source_file: r for r in fresh}}
        results = [done[f.rel_path] for f in discovery.files]
        with long_lived():
            asm = timed("assemble", assemble_dataset, quote(results), quote(discovery), policy, quote(memo))
        del futures, fresh, done, results, cached  # the records (texts, signatures) now live in asm's rows
        if memo is not None:
            logger.info(
                "near duplicates: %d pairs verified, of which %d by an earlier run",
                len(memo.used),
                memo.hits,
            )
    except (InputRootError, AccountingError, PolicyError) as exc:
        return failed(str(exc))

    staged = _staging(dataset_dir, run_id)
    checked = _checked_before(cache_dir, asm, policy)
    gates = timed("gates", check_gates, quote(asm), policy, quote(staged), quote(checked))
    metrics = build_metrics(
        run_id=run_id,
        input_dir=input_dir,
        dataset_dir=dataset_dir,
        asm=asm,
        policy=policy,
        stage_seconds=timings,
        outcome="published",
    )
    metrics["run_key"] = run_key(discovery, {s.source_file: s.sha256 for s in asm.sources}, policy)
    metrics["gates"] = [{"name": g.name, "passed": g.passed, "detail": g.detail} for g in gates]
    metrics["changes"] = changes_since_previous(dataset_dir, asm.records, asm.quarantine)
    broken = [g for g in gates if not g.passed]
    if broken:
        if staged is not None:
            staged.discard()
        reasons = "; ".join(f"{g.name}: {g.detail}" for g in broken)
        return failed(f"gate failed, nothing published: {reasons}", metrics, asm)
    try:
        version = timed(
            "publish", publish_dataset, dataset_dir, run_id, quote(asm), quote(metrics), quote(staged)
        )
    except (PublishError, OSError) as exc:
        return failed(f"not published: {exc}", metrics, asm)
    if cache_dir:  # entries of files that are gone (or changed) since would only pile up
        cache = FileCache(cache_dir)
        keys = cache.keys_of(asm.sources, policy.sha256)
        cache.prune(keys)
        cache.set_contract_checked(keys)  # every row of this version passed the gates
        save_memo(memo_file, memo)
    metrics["stage_seconds"] = dict(timings)
    page = write_report(reports_dir, quote(metrics), quote(asm))
    c = asm.counts
    message = (
        f"{c['ingested']} records from {c['files']} files: {c['kept']} kept, {c['duplicates']} duplicates, "
        f"{c['quarantined']} quarantined"
    )
    logger.info("published %s (%s); report %s", dataset_dir, Path(version).name, page)
    summary = {
        "quarantine_reasons": metrics["quarantine_reasons"],
        "languages": metrics["languages"],
        "fixes": metrics["fix_counts"],
        "files_from_cache": metrics["files_from_cache"],
        "stage_seconds": metrics["stage_seconds"],
        "changes": metrics.get("changes"),
    }
    return Completed(message=message, data=RunOutcome(run_id, True, message, dataset_dir, page, c, summary))
