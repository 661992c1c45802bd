"""The Event API (not only its text) against Go's -d=parsed output, event by event."""

from __future__ import annotations

import re

import pytest

from goblueprint.trace.events import (
    EventKind,
    GoState,
    ProcState,
    ResourceKind,
)
from goblueprint.trace.reader import open_trace

pytestmark = pytest.mark.slow

_HEAD = re.compile(r"M=(-?\d+) P=(-?\d+) G=(-?\d+) (\w+) Time=(-?\d+)")
_FRAME = re.compile(r"\t(.*) @ 0x([0-9a-f]+)\n\t\t(.*):(\d+)\n")


def go_events(text: str):
    """Split Go's -d=parsed text into (header fields, stack frames, transition frames)."""
    blocks = re.split(r"\n(?=M=-?\d+ P=)", text.rstrip("\n"))
    for block in blocks:
        head = _HEAD.match(block)
        assert head, block[:80]
        stack, tstack = [], []
        if "\nStack=\n" in block:
            stack = _FRAME.findall(block.split("\nStack=\n", 1)[1] + "\n")
        if "\nTransitionStack=\n" in block:
            part = block.split("\nTransitionStack=\n", 1)[1].split("\nStack=\n", 1)[0]
            tstack = _FRAME.findall(part + "\n")
        yield head.groups(), stack, tstack


def _frames(stk):
    return [(f.func, f"{f.pc:x}", f.file, str(f.line)) for f in stk.frames()]


@pytest.mark.parametrize("go", ["1.22", "1.27"])
def test_api_matches_go(go, go_trace, go_parsed):
    path = go_trace("sched", go=go)
    want = list(go_events(go_parsed(path).text.decode()))
    n = 0
    for ev, (head, stack, tstack) in zip(open_trace(path), want, strict=True):
        m, p, g, kind, time = head
        assert (ev.thread, ev.proc, ev.goroutine, ev.time) == (int(m), int(p), int(g), int(time))
        assert ev.kind.name.replace("_", "").lower() == kind.lower()
        assert _frames(ev.stack) == stack
        assert bool(ev.stack) == bool(stack)
        if ev.kind == EventKind.STATE_TRANSITION:
            st = ev.state_transition()
            assert _frames(st.stack) == tstack
            enum = GoState if st.resource.kind == ResourceKind.GOROUTINE else ProcState
            assert enum(st.old) is not None and enum(st.new) is not None
        n += 1
    assert n == len(want) > 1000


def test_accessors_on_real_events(go_trace):
    seen = set()
    for ev in open_trace(go_trace("sched", go="1.27")):
        k = ev.kind
        seen.add(k)
        if k == EventKind.METRIC:
            m = ev.metric()
            assert m.name.startswith("/") and m.value.uint64() >= 0
        elif k == EventKind.TASK_BEGIN:
            t = ev.task()
            assert t.id > 0 and t.type
        elif k in (EventKind.REGION_BEGIN, EventKind.REGION_END):
            assert ev.region().type
        elif k == EventKind.LOG:
            lg = ev.log()
            assert lg.category or lg.message
        elif k in (EventKind.RANGE_BEGIN, EventKind.RANGE_ACTIVE, EventKind.RANGE_END):
            r = ev.range()
            assert r.name
            if k == EventKind.RANGE_END:
                assert isinstance(ev.range_attributes(), list)
        elif k == EventKind.SYNC:
            s = ev.sync()
            assert s.n >= 1
        elif k == EventKind.STATE_TRANSITION:
            st = ev.state_transition()
            if st.resource.kind == ResourceKind.GOROUTINE and st.new == GoState.RUNNING:
                assert st.old in (GoState.RUNNABLE, GoState.UNDETERMINED, GoState.SYSCALL, GoState.RUNNING)
    assert {
        EventKind.METRIC,
        EventKind.TASK_BEGIN,
        EventKind.LOG,
        EventKind.REGION_END,
        EventKind.SYNC,
    } <= seen
