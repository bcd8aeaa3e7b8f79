"""Work in a forked child process while this process does something else, without a Dask cluster.

What this adds to ``ProcessPoolExecutor``: the child is forked (it starts warm: what this process has
imported and loaded, it has), it is used for one call, and the call never fails for want of a child:
where no child can be forked (outside Linux, in a daemonic process such as a Dask worker, no memory for
a fork), or the child dies, the call is made in this process instead.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Generic, TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    """Whether this process may have forked children (Linux; not a daemonic process: a Dask worker)."""
    return sys.platform == "linux" and not multiprocessing.current_process().daemon


def cores() -> int:
    return os.cpu_count() or 1


class InFork(Generic[T]):
    """``fn(*args)`` started in a forked child at once; ``result()`` waits for it (its exceptions are
    raised here). The arguments and the result travel by pickle. When no child could be forked, or it
    died, ``result()`` makes the call in this process."""

    def __init__(self, fn: Callable[..., T], *args) -> None:
        self._fn, self._args = fn, args
        self._pool: ProcessPoolExecutor | None = None
        self._future = None
        if not can_fork():
            return
        try:
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
            self._future = self._pool.submit(fn, *args)
        except OSError:  # no fork (no memory for one): made in this process by result()
            self._close()

    @property
    def forked(self) -> bool:
        return self._future is not None

    def result(self) -> T:
        try:
            if self._future is not None:
                with contextlib.suppress(BrokenProcessPool):  # the child died: made here below
                    return self._future.result()
        finally:
            self._close()
        return self._fn(*self._args)

    def _close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
        self._pool = self._future = None
