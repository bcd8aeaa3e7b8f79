"""Environment defaults set once, at the edge (the CLI; the flow's start for the allocator), never inside
stages; values the user set win."""

from __future__ import annotations

import ctypes
import os
import sys

# No telemetry (this machine has no internet, and a data tool should not phone home).
PREFECT_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY": "false",
    "PREFECT_TELEMETRY_ENABLE_RESOURCE_METRICS": "false",
}

# Arrow's allocator: jemalloc where the wheel has it (Linux) rather than mimalloc; it halves the time of
# turning record rows into Arrow (benchmarks/results). It changes where buffers live, not output bytes,
# and is read at Arrow's first allocation, so it is set before anything imports pyarrow.
ARROW_DEFAULTS = {"ARROW_DEFAULT_MEMORY_POOL": "jemalloc"} if sys.platform == "linux" else {}


# A fixed mmap threshold keeps glibc from moving large arrays into its heap once large blocks have been
# freed, where a freed array stays with the process; set by mallopt, as glibc reads its variables at start.
MMAP_THRESHOLD = 128 << 10
M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def _glibc():
    """glibc's allocator calls, or None where the C library is not glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def return_freed_memory() -> bool:
    """Fix glibc's mmap threshold for this process; False where the C library is not glibc."""
    return bool((libc := _glibc()) and libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def trim_freed_memory() -> bool:
    """Hand glibc's free heap pages back to the system (``malloc_trim``); False where the C library is not
    glibc. For the seams between a run's stages: freed blocks that a stage's long-lived ones sit above stay
    in the heap, where glibc does not unmap them by itself."""
    if (libc := _glibc()) is None:
        return False
    libc.malloc_trim(0)
    return True


def apply_defaults(environ: dict | None = None) -> None:
    """Set our defaults in ``environ`` (``os.environ`` unless given); what is set already stays."""
    env = os.environ if environ is None else environ
    for key, value in (PREFECT_DEFAULTS | ARROW_DEFAULTS).items():
        env.setdefault(key, value)
