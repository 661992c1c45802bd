"""Memory a stage of the ingest freed, given back to the system before the next stage.

glibc's malloc keeps the pages of freed blocks for reuse, in every thread's arena, and
hands them back only from the top of a heap: after a stage of the ingest (the events
written, the spans sorted and written) hundreds of its blocks are free but still
resident, and the next stage's peak stands on them. ``malloc_trim(0)`` returns every
free page of every arena (glibc 2.8 on); it costs a walk of the heaps, milliseconds, so
it is called between stages, not in loops. Elsewhere (another libc, no libc found) it
does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from functools import cache


@cache
def _trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:  # not glibc (musl, macOS)
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def give_back() -> None:
    """Return the free pages of the process's malloc heaps to the system (see the module)."""
    trim = _trim()
    if trim is not None:
        trim(0)
