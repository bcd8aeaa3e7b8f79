"""forked.call_in_fork: a call made in a forked child, or in this process when no child can make it."""

import multiprocessing
import os
import sys
import time

import pytest

from corpus_hygiene import forked
from corpus_hygiene.forked import call_in_fork

linux = pytest.mark.skipif(sys.platform != "linux", reason="children are forked on Linux only")


def _pid_and(value):
    return os.getpid(), value


def _fail(message):
    raise ValueError(message)


def _die_in_child(parent):
    if os.getpid() != parent:
        os._exit(3)  # the child dies without a word
    return "made here"


@linux
def test_the_call_is_made_in_a_child_and_its_result_comes_back():
    pid, value = call_in_fork(_pid_and, ["a", {"b": 2}])
    assert pid != os.getpid() and value == ["a", {"b": 2}]


@linux
def test_an_error_in_the_child_is_raised_here():
    with pytest.raises(ValueError, match="bad input"):
        call_in_fork(_fail, "bad input")


def _oserror_in_child(parent):
    if os.getpid() != parent:
        raise OSError(28, "No space left on device")
    return "made here"


@linux
def test_an_oserror_of_the_call_itself_is_raised_not_taken_for_a_failed_fork():
    with pytest.raises(OSError, match="No space left"):
        call_in_fork(_oserror_in_child, os.getpid())


@linux
def test_a_child_that_dies_costs_only_the_time_the_call_is_made_here():
    assert call_in_fork(_die_in_child, os.getpid()) == "made here"


def test_where_no_child_may_be_forked_the_call_is_made_here(monkeypatch):
    monkeypatch.setattr(forked, "can_fork", lambda: False)
    assert call_in_fork(_pid_and, 1) == (os.getpid(), 1)


def test_a_fork_that_fails_for_want_of_memory_is_made_here(monkeypatch):
    class NoFork:
        def __init__(self, *args, **kwargs):
            pass

        def submit(self, *args):
            raise OSError(12, "Cannot allocate memory")

        def shutdown(self, **kwargs):
            pass

    monkeypatch.setattr(forked, "can_fork", lambda: True)
    monkeypatch.setattr(forked, "ProcessPoolExecutor", NoFork)
    assert call_in_fork(_pid_and, 2) == (os.getpid(), 2)


def _pid_and_start(value):
    return os.getpid(), time.time(), value


@linux
def test_a_call_begun_ahead_is_taken_by_the_same_call_later():
    assert forked.start_ahead(_pid_and_start, ["files", 1])
    assert forked.begun_ahead(_pid_and_start, ["files", 1])
    assert forked.arguments_ahead(_pid_and_start) == [(["files", 1],)]
    time.sleep(0.3)
    asked = time.time()
    pid, began, value = call_in_fork(_pid_and_start, ["files", 1])
    assert pid != os.getpid() and value == ["files", 1]
    assert began < asked  # the child had begun before it was asked for
    assert not forked.begun_ahead(_pid_and_start, ["files", 1])
    assert forked.arguments_ahead(_pid_and_start) == []


@linux
def test_a_call_with_other_arguments_does_not_take_what_was_begun_ahead():
    assert forked.start_ahead(_pid_and_start, "a")
    try:
        time.sleep(0.3)
        asked = time.time()
        _, began, value = call_in_fork(_pid_and_start, "b")
        assert value == "b" and began >= asked  # made by a child of its own, forked when asked
        assert forked.arguments_ahead(_pid_and_start) == [("a",)]
    finally:
        forked.drop_ahead()
    assert forked.arguments_ahead(_pid_and_start) == []


def _sleep(seconds):
    time.sleep(seconds)
    return seconds


@linux
def test_what_nobody_took_is_ended_by_drop_ahead():
    before = set(multiprocessing.active_children())
    assert forked.start_ahead(_sleep, 60)
    assert len(set(multiprocessing.active_children()) - before) == 1
    started = time.monotonic()
    forked.drop_ahead()
    assert time.monotonic() - started < 10  # the child was ended, not waited for
    assert set(multiprocessing.active_children()) - before == set()
    assert not forked.begun_ahead(_sleep, 60)


def test_nothing_is_begun_ahead_where_no_child_may_be_forked(monkeypatch):
    monkeypatch.setattr(forked, "can_fork", lambda: False)
    assert not forked.start_ahead(_pid_and_start, 1)
    assert forked.arguments_ahead(_pid_and_start) == []
    assert call_in_fork(_pid_and_start, 1)[0] == os.getpid()


@pytest.mark.parametrize(
    ("todo", "total", "processes", "cores", "expected"),
    [(1, 9, 2, 2, True), (0, 9, 2, 2, False), (9, 9, 2, 2, False), (1, 9, 1, 2, False), (1, 9, 2, 1, False)],
)
def test_new_files_go_beside_only_with_some_of_each_a_second_process_and_a_second_core(
    monkeypatch, todo, total, processes, cores, expected
):
    monkeypatch.setattr(forked, "can_fork", lambda: True)
    monkeypatch.setattr(forked, "cores", lambda: cores)
    assert forked.beside(todo, total, processes) is expected
