"""runtime.py: freed memory goes back to the system (glibc's allocator, set up at the run's start)."""

import subprocess
import sys

import pytest

_HEAP = """
import sys
import numpy as np
from corpus_hygiene.runtime import return_freed_memory
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20
if sys.argv[1] == "fixed":
    assert return_freed_memory()
big = np.ones(16 << 20, np.uint8); del big  # a freed large block raises glibc's threshold
before = rss()
arrays = [np.ones(1 << 20, np.uint8) for _ in range(100)]
del arrays[::2]  # every other one freed; the rest holds the heap's top
print(rss() - before)
"""


def _megabytes_held(script: str, mode: str) -> int:
    """What ``script`` prints run in a fresh process with ``mode`` as its argument: the MB it holds."""
    return int(subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True,
                              check=True).stdout)  # fmt: skip


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's allocator")
def test_freed_large_arrays_go_back_to_the_system_with_the_fixed_mmap_threshold():
    """Half of 100 arrays of 1 MB freed: glibc keeps them in its heap after its threshold rose; with
    ``return_freed_memory`` they are unmapped (the process holds ~50 MB, not ~100)."""
    held = {mode: _megabytes_held(_HEAP, mode) for mode in ("glibc", "fixed")}
    assert held["glibc"] >= 90 and held["fixed"] <= 60


_HOLES = """
import sys
from corpus_hygiene.runtime import return_freed_memory, trim_freed_memory
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20
assert return_freed_memory()
before = rss()
pairs = [(bytes(64 << 10), bytes(1 << 10)) for _ in range(1600)]  # 100 MB in the heap, 1 KB after each
small = [b for _, b in pairs]
del pairs  # the 64 KB blocks are freed; each has a live block above it
if sys.argv[1] == "trim":
    assert trim_freed_memory()
print(rss() - before)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's allocator")
def test_trim_hands_back_freed_heap_blocks_that_live_ones_sit_above():
    """100 MB of 64 KB blocks freed between live 1 KB ones: glibc keeps them; trimmed, they go back."""
    held = {mode: _megabytes_held(_HOLES, mode) for mode in ("keep", "trim")}
    assert held["keep"] >= 70 and held["trim"] <= 20
