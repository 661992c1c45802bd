"""The C heap settings a view's process makes (timeline.heap), seen through glibc's own report."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Threads that each hold blocks at once: without a limit glibc gives each its own arena.
_PROBE = """
import ctypes, sys, threading
from goblueprint.timeline.heap import give_back, few_arenas
if sys.argv[1] == "few":
    assert few_arenas()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
hold, ready = [], threading.Barrier(4)
def work():
    ready.wait()
    hold.extend(libc.malloc(64 << 10) for _ in range(50))
    ready.wait()
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
give_back()
libc.malloc_stats()  # per arena, to stderr
"""


def _arenas(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True)
    return out.stderr.count("Arena ")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_few_arenas_caps_the_threads_arenas() -> None:
    from goblueprint.timeline.heap import ARENAS

    if _arenas("default") <= ARENAS:
        pytest.skip("this libc gave the threads no more arenas than the cap")
    assert _arenas("few") == ARENAS
