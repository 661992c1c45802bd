"""The C heap of a process that runs a view: few arenas, and freed pages given back between stages.

glibc's malloc keeps the pages of freed blocks for reuse, in every thread's arena, and
hands them back only from the top of a heap: after a stage of the ingest (the events
written, the spans sorted and written) hundreds of its blocks are free but still
resident, and the next stage's peak stands on them. ``malloc_trim(0)`` returns every
free page of every arena (glibc 2.8 on); it costs a walk of the heaps, milliseconds, so
it is called between stages, not in loops.

A view's threads (the builder's, the writers', the readers' ahead) each got an arena of
their own (glibc makes up to 8 per core), and what one freed the others could not reuse:
each stage stood on the free blocks of the threads before it. ``few_arenas`` caps them at
``ARENAS``. One arena was leanest on a 46 MB trace (a first timeline 354 -> 312 MB, an
ingest 275 -> 252) but on a 462.5 MB trace its ingest took 248 s against 145 s (its threads
queue on the one lock); two took that ingest to 112.5 s (session 22's code: 124.3 s the same
day) and kept the 46 MB ingest at 230-239 MB (one: 242-247).

Elsewhere (another libc) both do nothing.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

# mallopt's parameter for the most arenas (malloc.h).
_M_ARENA_MAX = -8
ARENAS = 2


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


def few_arenas() -> bool:
    """Let threads that have no arena yet share ARENAS arenas (glibc): called before a command
    starts its threads. Whether it was set."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is None or getattr(_libc(), "malloc_trim", None) is None:  # glibc's alone
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(_M_ARENA_MAX, ARENAS))
