"""forked.call_in_fork: a call made in a forked child, or in this process when no child can make it."""

import os
import sys

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
