"""The reader orders a generation in bounded steps: same events, memory bounded by the data."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from goblueprint.trace import reader
from goblueprint.trace.events import EV_SYNC_EVENT

from .conftest import ROOT, our_parsed

# The runtime starts a new generation about every second; its longest period (the
# GODEBUG is an int32 of nanoseconds, 2.1 s) puts the run of the workload at this scale
# into a few generations of MBs: the case where a generation's worth of decoded events
# would dwarf the file.
ONE_GENERATION = {"GODEBUG": "traceadvanceperiod=2147483647"}


def _outcome(data: bytes) -> tuple[bytes, str | None]:
    got = our_parsed(data)
    return got.text, got.error


def _generations(path) -> list[int]:
    """Events per generation."""
    sizes: list[int] = []
    with reader.open_trace(path) as r:
        for chunk in r.chunks():
            if len(chunk) == 1 and chunk.typ[0] == EV_SYNC_EVENT:
                sizes.append(0)
            else:
                sizes[-1] += len(chunk)
    return sizes


@pytest.mark.parametrize(("prog", "go"), [("sched", "1.22"), ("sched", "1.27"), ("cpusample", "1.27")])
def test_small_steps_give_the_same_events(prog, go, go_trace, own_trace, monkeypatch):
    # Steps of 16 events stop the ordering between any two advances: what it carries
    # over (cursors, heap, CPU samples, grown tables) must resume exactly.
    path = own_trace(prog, go) if prog == "cpusample" else go_trace(prog, go=go)
    data = path.read_bytes()
    whole = _outcome(data)
    events = sum(len(c) for c in reader.Reader(data).chunks())
    monkeypatch.setattr(reader, "CHUNK_EVENTS", 16)
    sizes = [len(c) for c in reader.Reader(data).chunks()]
    # Many small steps; how many depends on how long a trace the run wrote (a loaded run's
    # cpusample trace held ~400 events).
    assert max(sizes) <= 16 and len(sizes) >= min(100, events // 16), (events, len(sizes))
    assert _outcome(data) == whole


def test_small_steps_fail_where_whole_generations_do(go_trace, monkeypatch):
    # A trace cut short: the same events, then the same error at the same offset.
    data = go_trace("sched", go="1.27").read_bytes()
    cuts = [len(data) * k // 5 for k in range(1, 5)]
    whole = [_outcome(data[:c]) for c in cuts]
    assert all(error for _, error in whole)
    monkeypatch.setattr(reader, "CHUNK_EVENTS", 16)
    assert [_outcome(data[:c]) for c in cuts] == whole


_PEAK = """
import json, sys
from goblueprint.trace import kernels
from goblueprint.trace.reader import open_trace

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

def read(path):
    n = 0
    with open_trace(path) as r:
        for chunk in r.chunks():
            n += len(chunk)
    return n

kernels.get()
read(sys.argv[2])  # a small trace first: the reader's fixed costs (step buffers) are in the base
base = hwm()
n = read(sys.argv[1])
print(json.dumps({"base": base, "peak": hwm(), "events": n}))
"""


def test_memory_is_bounded_by_the_file_on_one_big_generation(go_trace):
    # How big the trace is depends on the machine's load while it ran (2.4-36 MB seen): the
    # bound is on what grows with it, so the reader's fixed costs (its step buffers, ~5 MB)
    # are in the base, measured by reading a small trace first in the same process.
    path = go_trace("big", "1.27", 16, env=ONE_GENERATION)
    small = go_trace("small", "1.27", prog_root=ROOT / "tests" / "trace_check" / "goprogs")
    gens = _generations(path)
    size = path.stat().st_size
    # Few, large generations (how few depends on the machine's load while it ran).
    assert max(gens) >= 100_000 and max(gens) * 5 >= sum(gens), gens
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK, str(path), str(small)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    got = json.loads(proc.stdout)
    assert got["events"] == sum(gens) + len(gens)
    # Above the interpreter with the reader loaded and warmed: at most 3 bytes per byte of
    # trace (the mapped file itself is one of them).
    assert got["peak"] - got["base"] <= 3 * size, (got, size)
