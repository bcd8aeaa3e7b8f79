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
from typing import TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    """Whether this process may have forked children (Linux; not a daemonic process: a Dask worker)."""
    return sys.platform == "linux" and not multiprocessing.current_process().daemon


def cores() -> int:
    return os.cpu_count() or 1


def call_in_fork(fn: Callable[..., T], *args) -> T:
    """``fn(*args)``, made in a forked child while this thread waits (other threads of this process
    go on); its exceptions are raised here; the arguments and the result travel by pickle. Made in this
    process when no child can be forked, or the child died."""
    if not can_fork():
        return fn(*args)
    pool = None
    try:
        try:
            pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
            future = pool.submit(fn, *args)
        except OSError:  # no fork (no memory for one)
            future = None
        if future is not None:
            with contextlib.suppress(BrokenProcessPool):  # the child died: made here below
                return future.result()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return fn(*args)
