"""Traces the scheduler workload does not produce: CPU samples, coroutine switches
(GoSwitch/GoSwitchDestroy, Go 1.23+), the experimental alloc/free events,
flight-recorder windows (Go 1.25+): snapshots cut from a running trace, and traces
of several generations (state carried across them; split by generation number
before Go 1.26, by EndOfGeneration after)."""

from __future__ import annotations

import re

import pytest

from goblueprint.trace.events import EventKind
from goblueprint.trace.reader import Reader

from .conftest import batch_bounds, cut_points, our_parsed, same_error

pytestmark = pytest.mark.slow

# Go's kind names as printed ("StackSample") -> EventKind.
_KINDS = {k.name.replace("_", "").lower(): k for k in EventKind}
_HEAD = re.compile(rb"^M=-?\d+ P=-?\d+ G=-?\d+ (\w+) ", re.M)

CASES = [
    ("cpusample", "1.22", {}),
    ("cpusample", "1.27", {}),
    ("coro", "1.23", {"GODEBUG": "traceallocfree=1"}),
    ("coro", "1.25", {"GODEBUG": "traceallocfree=1"}),
    ("coro", "1.27", {"GODEBUG": "traceallocfree=1"}),
    ("flight", "1.25", {}),
    ("flight", "1.27", {}),
    ("gens", "1.22", {}),
    ("gens", "1.25", {}),
    ("gens", "1.27", {}),
]


@pytest.mark.parametrize(("prog", "go", "env"), CASES, ids=[f"{p}-{g}" for p, g, _ in CASES])
def test_same_as_go(prog, go, env, own_trace, go_parsed):
    path = own_trace(prog, go, env)
    want = go_parsed(path)
    got = our_parsed(path.read_bytes())
    assert want.error is None
    assert got.text == want.text
    assert same_error(got.error, want.error)
    # The feature under test is really in the trace.
    kinds = {_KINDS[w.decode().lower()] for w in set(_HEAD.findall(got.text))}
    if prog == "cpusample":
        assert EventKind.STACK_SAMPLE in kinds
    elif prog == "flight":
        assert EventKind.TASK_BEGIN in kinds and EventKind.REGION_BEGIN in kinds
    elif prog == "gens":
        assert got.text.count(b" Sync Time=") >= 4  # at least 3 generations
    else:
        assert EventKind.EXPERIMENTAL in kinds


def test_experimental_event_api(own_trace):
    data = own_trace("coro", "1.27", {"GODEBUG": "traceallocfree=1"}).read_bytes()
    names = set()
    syncs = 0
    for ev in Reader(data):
        if ev.kind == EventKind.EXPERIMENTAL:
            x = ev.experimental()
            names.add(x.name)
            assert x.experiment == "AllocFree"
            assert len(x.arg_values) == len(x.args)
        elif ev.kind == EventKind.SYNC:
            s = ev.sync()
            if s.clock_snapshot is not None:
                syncs += 1
                assert "AllocFree" in s.experimental_batches
                assert all(b.data for b in s.experimental_batches["AllocFree"])
    assert {"HeapObjectAlloc", "SpanAlloc"} <= names
    assert syncs >= 1


@pytest.mark.parametrize("go", ["1.22", "1.27"])
def test_multi_generation_truncated_like_go(go, own_trace, go_parsed, tmp_path):
    data = own_trace("gens", go).read_bytes()
    bounds = set(batch_bounds(data))
    for cut in cut_points(data):
        path = tmp_path / f"cut-{cut}.trace"
        path.write_bytes(data[:cut])
        want = go_parsed(path)
        got = our_parsed(data[:cut])
        assert got.text == want.text, f"cut at {cut}"
        assert same_error(got.error, want.error), f"cut at {cut}"
        if 16 < cut and cut not in bounds:
            assert want.error is not None, f"Go accepted a trace cut at {cut}"
