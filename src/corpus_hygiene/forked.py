"""Work in a forked child process while this process does something else, without a Dask cluster.

What this adds to ``ProcessPoolExecutor``: the child is forked (it starts warm: what this process has
imported and loaded, it has), it is used for one call, and the call never fails for want of a child:
where no child can be forked (outside Linux, in a daemonic process such as a Dask worker, no memory for
a fork), or the child dies, the call is made in this process instead. A call may also be begun before
it is asked for (``start_ahead``): the CLI begins a re-run's new files while Prefect starts.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import sys
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import NamedTuple, TypeVar

T = TypeVar("T")


class _Begun(NamedTuple):
    name: tuple[str, str]  # the function's module and name
    args: tuple
    pool: ProcessPoolExecutor  # of the one child
    future: Future


# Calls begun ahead (``start_ahead``), by what they are (``_call_key``): taken by ``call_in_fork``.
_AHEAD: dict[bytes, _Begun] = {}


def can_fork() -> bool:
    """Whether this process may have forked children (Linux; not a daemonic process: a Dask worker)."""
    return sys.platform == "linux" and not multiprocessing.current_process().daemon


def cores() -> int:
    return os.cpu_count() or 1


def beside(todo: int, total: int, processes: int) -> bool:
    """Whether a run allowed ``processes`` processes (no Dask workers) makes its ``todo`` new files of
    ``total`` in a forked child while it reads the other files' cache entries: some of each, a second
    core, and a child to fork."""
    return 0 < todo < total and processes > 1 and cores() > 1 and can_fork()


def call_in_fork(fn: Callable[..., T], *args) -> T:
    """``fn(*args)``, made in a forked child while this thread waits (other threads of this process
    go on); its exceptions are raised here; the arguments and the result travel by pickle. Made in this
    process when no child can be forked, or the child died. When the same call (equal arguments) was
    begun ahead, its result is taken instead."""
    if not can_fork():
        return fn(*args)
    begun = _AHEAD.pop(_call_key(fn, args), None) if _AHEAD else None
    return _result((begun.pool, begun.future) if begun else _fork(fn, args), fn, args)


def start_ahead(fn: Callable, *args) -> bool:
    """Begin ``call_in_fork(fn, *args)`` now, in a child forked at once, and return: the first later
    ``call_in_fork`` of ``fn`` with equal arguments (the same pickle) waits for this child instead of
    forking one. False, nothing begun, where no child can be forked. ``drop_ahead`` ends a call nobody
    took. Fork before threads start where possible: the child has only the forking thread."""
    if not can_fork():
        return False
    key = _call_key(fn, args)
    if key not in _AHEAD:
        started = _fork(fn, args)
        if started is None:
            return False
        _AHEAD[key] = _Begun(_name(fn), args, *started)
    return True


def begun_ahead(fn: Callable, *args) -> bool:
    return bool(_AHEAD) and _call_key(fn, args) in _AHEAD


def arguments_ahead(fn: Callable) -> list[tuple]:
    """The arguments of the calls of ``fn`` begun ahead and not taken yet."""
    return [begun.args for begun in _AHEAD.values() if begun.name == _name(fn)]


def drop_ahead() -> None:
    """End the children of calls begun ahead that nobody took (their results are not wanted)."""
    while _AHEAD:
        _, begun = _AHEAD.popitem()
        children = getattr(begun.pool, "_processes", None) or {}  # no public way before Python 3.14
        for process in list(children.values()):
            with contextlib.suppress(OSError):
                process.terminate()
        begun.pool.shutdown(cancel_futures=True)


def _name(fn: Callable) -> tuple[str, str]:
    return fn.__module__, fn.__qualname__


def _call_key(fn: Callable, args: tuple) -> bytes:
    return pickle.dumps((_name(fn), args))  # what the child is sent, and fn's name


def _fork(fn: Callable, args: tuple) -> tuple[ProcessPoolExecutor, Future] | None:
    """A child forked for ``fn(*args)`` and its future; None when the fork failed (no memory for one)."""
    try:
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    except OSError:  # its queue's pipes and locks (no file descriptors left)
        return None
    try:
        return pool, pool.submit(fn, *args)
    except OSError:
        pool.shutdown(cancel_futures=True)
        return None


def _result(started: tuple[ProcessPoolExecutor, Future] | None, fn: Callable[..., T], args: tuple) -> T:
    if started is not None:
        pool, future = started
        try:
            with contextlib.suppress(BrokenProcessPool):  # the child died: made here below
                return future.result()
        finally:
            pool.shutdown(cancel_futures=True)
    return fn(*args)
