"""The C heap of a process that runs a view: one arena, and freed pages given back between stages.

glibc's malloc keeps the pages of freed blocks for reuse, in every thread's arena, and
hands them back only from the top of a heap: after a stage of the ingest (the events
written, the spans sorted and written) hundreds of its blocks are free but still
resident, and the next stage's peak stands on them. ``malloc_trim(0)`` returns every
free page of every arena (glibc 2.8 on); it costs a walk of the heaps, milliseconds, so
it is called between stages, not in loops.

A view's threads (the builder's, the writers', the readers' ahead) each got an arena of
their own, and what one freed the others could not reuse: each stage stood on the free
blocks of the threads before it. ``one_arena`` makes every thread allocate from the main
arena (on two cores their allocations seldom meet).

Elsewhere (another libc) both do nothing.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

# mallopt's parameter for the most arenas (malloc.h).
_M_ARENA_MAX = -8


@cache
def _libc() -> Any:
    # The process's own symbols: libc's, without looking for its file (find_library runs ldconfig).
    return ctypes.CDLL(None)


def give_back() -> None:
    """Return the free pages of the process's malloc heaps to the system (see the module)."""
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:  # glibc, not musl or macOS
        trim.argtypes = [ctypes.c_size_t]
        trim(0)


def one_arena() -> bool:
    """Let every thread that has no arena yet allocate from the main arena (glibc): called
    before a command starts its threads. Whether it was set."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is None or getattr(_libc(), "malloc_trim", None) is None:  # glibc's alone
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(_M_ARENA_MAX, 1))
