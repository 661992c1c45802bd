"""Stacks of running spans, derived from a real trace's Timeline, against a span-by-span walk."""

from __future__ import annotations

import polars as pl
import synth

from goblueprint.render.lanes import sorted_spans
from goblueprint.render.run_stacks import running_stacks
from goblueprint.timeline.model import LaneKind, State


def _walk(spans: pl.DataFrame) -> dict[int, tuple[int, int]]:
    """Row -> (start stack, end stack) of each running G span, the way go tool trace pairs them:
    the stack where the goroutine last stopped running (or was created), and the one it stops at."""
    out: dict[int, tuple[int, int]] = {}
    rows = spans.select("lane_kind", "lane_id", "start", "end", "state", "stack").rows()
    last_lane, carried = None, 0
    for k, (kind, lane, _start, end, state, stack) in enumerate(rows):
        if kind != LaneKind.G:
            continue
        if (kind, lane) != last_lane:
            last_lane, carried = (kind, lane), 0
        if state == State.G_RUNNING:
            nxt = rows[k + 1] if k + 1 < len(rows) else None
            stops = (
                nxt is not None and nxt[:2] == (kind, lane) and nxt[2] == end and nxt[4] != State.G_RUNNING
            )
            out[k] = (stack or carried, nxt[5] if stops else 0)
            carried = 0
        elif stack:
            carried = stack
    return out


def test_running_spans_get_the_stacks_around_them(sched_timeline):
    spans = sorted_spans(sched_timeline)
    start, end = running_stacks(spans)
    want = _walk(spans)
    assert want
    got = {k: (int(start[k]), int(end[k])) for k in want}
    assert got == want
    # Not vacuous: nearly every run of a real program resumes somewhere known.
    with_stack = sum(1 for s, _e in got.values() if s)
    assert with_stack >= 0.9 * len(got)
    # Spans that are not runs keep their own stack and get no end stack.
    state = spans["state"].to_numpy()
    kind = spans["lane_kind"].to_numpy()
    others = ~(
        ((kind == LaneKind.G) & (state == State.G_RUNNING))
        | (state == State.P_RUNNING)
        | (state == State.M_RUNNING)
    )
    assert (start[others] == spans["stack"].to_numpy()[others]).all()
    assert (end[others] == 0).all()


def test_proc_and_thread_runs_show_their_goroutines_stacks(sched_timeline):
    spans = sorted_spans(sched_timeline)
    start, end = running_stacks(spans)
    g_runs = {
        (g, s): (int(start[k]), int(end[k]), e)
        for k, (kind, state, g, s, e) in enumerate(
            spans.select("lane_kind", "state", "g", "start", "end").rows()
        )
        if kind == LaneKind.G and state == State.G_RUNNING
    }
    checked = 0
    for k, (kind, state, g, s) in enumerate(spans.select("lane_kind", "state", "g", "start").rows()):
        if kind == LaneKind.P and state == State.P_RUNNING and g >= 0 and (g, s) in g_runs:
            assert (int(start[k]), int(end[k])) == g_runs[(g, s)][:2]
            checked += 1
    assert checked > 100


def test_a_run_keeps_a_stack_of_its_own():
    spans = sorted_spans(synth.synthetic(run_stack=2))
    start, _end = running_stacks(spans)
    runs = ((spans["lane_kind"] == LaneKind.G) & (spans["state"] == State.G_RUNNING)).to_numpy()
    assert (start[runs] == 2).all()
