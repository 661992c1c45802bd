"""Stacks for running spans: where a goroutine resumed and where it stopped.

Go's trace records no stack when a goroutine starts running (GoStart has none), so
the Timeline's running spans carry stack 0.  What a reader wants on a running span
is what ``go tool trace`` shows as its "Stack" and "End Stack": the stack where the
goroutine last stopped running (blocked, was preempted, entered a syscall) or, for
a new goroutine, its creation stack, since that is where it resumes; and the stack
where this run ended.  Both are already in the Timeline, on the G lane's
neighbouring non-running spans, so they are derived here from the builder's
output, with no change to it.  A running span that does carry a stack of its own
(a transition with a stack, e.g. a syscall return) keeps it.

P and M lanes show the same runs of goroutines; their running spans get the stacks
of the G lane's run they overlap.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from goblueprint.timeline.model import LaneKind, State

_RUN_STATES = (int(State.G_RUNNING), int(State.P_RUNNING), int(State.M_RUNNING))
_RUNS_SCHEMA = {"g": pl.Int64, "start": pl.Int64, "run_end": pl.Int64, "s0": pl.Int64, "s1": pl.Int64}


def running_stacks(spans: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(start stack, end stack) per row of SPANS (sorted by lane, then start), 0 for none.

    Rows that are not running keep their own stack as start stack and get no end stack.
    """
    start_stack, end_stack, g_running = lane_stacks(spans)
    runs = goroutine_runs(spans, g_running, start_stack, end_stack)
    rows, g, starts = proc_and_thread_runs(spans)
    copy_run_stacks(runs, rows, g, starts, start_stack, end_stack)
    return start_stack, end_stack


def lane_stacks(spans: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stacks ``running_stacks`` gives the G lanes' runs, which each lane's own spans
    decide, with the other rows' own stacks (P and M runs get theirs from ``copy_run_stacks``);
    and which rows are G runs.  SPANS holds whole lanes, sorted by lane, then start."""
    n = spans.height
    kind = spans["lane_kind"].to_numpy()
    lane = spans["lane_id"].to_numpy()
    state = spans["state"].to_numpy()
    own = spans["stack"].to_numpy().astype(np.int64)
    start_stack = own.copy()
    end_stack = np.zeros(n, dtype=np.int64)
    is_g = kind == int(LaneKind.G)
    running = is_g & (state == int(State.G_RUNNING))
    if n == 0:
        return start_stack, end_stack, running
    # Rows where a new G lane begins: nothing is carried across lanes.
    lane_start = np.ones(n, dtype=bool)
    lane_start[1:] = (kind[1:] != kind[:-1]) | (lane[1:] != lane[:-1])

    # Start stack: the last non-running span with a stack since the previous run on this
    # lane (waiting with its block stack, then runnable with none, then running: the block
    # stack).  A forward fill of "last row with a stack", reset by runs and lane starts.
    has = is_g & ~running & (own != 0)
    marker = has | running | lane_start
    last = np.maximum.accumulate(np.where(marker, np.arange(n), 0))
    carried = np.where(has[last], own[last], 0)
    prev = np.zeros(n, dtype=np.int64)
    prev[1:] = carried[:-1]
    prev[lane_start] = 0
    take = running & (own == 0)
    start_stack[take] = prev[take]

    # End stack: the next span on the lane, when it begins where this run ends and is
    # not a run itself (it holds the stack of the transition that stopped this run).
    nxt = np.zeros(n, dtype=np.int64)
    follows = np.zeros(n, dtype=bool)
    follows[:-1] = (
        ~lane_start[1:] & ~running[1:] & (spans["start"].to_numpy()[1:] == spans["end"].to_numpy()[:-1])
    )
    nxt[:-1] = own[1:]
    end_stack[running & follows] = nxt[running & follows]
    return start_stack, end_stack, running


def goroutine_runs(
    spans: pl.DataFrame,
    g_running: np.ndarray,
    start_stack: np.ndarray,
    end_stack: np.ndarray,
    only: np.ndarray | None = None,
) -> pl.DataFrame:
    """The G runs of SPANS (rows G_RUNNING) with their stacks: g, start, run_end, s0, s1;
    with ONLY, the runs of those goroutines alone.

    G lanes are sorted by (lane_id = g, start) already (sorted_spans), so the runs are in
    the order ``copy_run_stacks`` joins them in."""
    g = spans["g"].to_numpy()
    rows = g_running if only is None else g_running & np.isin(g, only)
    return pl.DataFrame(
        {
            "g": g[rows],
            "start": spans["start"].to_numpy()[rows],
            "run_end": spans["end"].to_numpy()[rows],
            "s0": start_stack[rows],
            "s1": end_stack[rows],
        },
        schema=_RUNS_SCHEMA,
    )


def proc_and_thread_runs(spans: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The P and M rows of SPANS that run a goroutine: (row, g, start), in row order."""
    kind = spans["lane_kind"].to_numpy()
    state = spans["state"].to_numpy()
    g = spans["g"].to_numpy()
    pm = ((kind == int(LaneKind.P)) | (kind == int(LaneKind.M))) & np.isin(state, _RUN_STATES) & (g >= 0)
    rows = np.flatnonzero(pm)
    return rows, g[rows].astype(np.int64), spans["start"].to_numpy()[rows].astype(np.int64)


def copy_run_stacks(
    runs: pl.DataFrame,
    rows: np.ndarray,
    g: np.ndarray,
    starts: np.ndarray,
    start_stack: np.ndarray,
    end_stack: np.ndarray,
) -> None:
    """Give each P/M running span (ROWS, with their G and START) the stacks of the G run it
    shows (same G, overlapping: RUNS, from ``goroutine_runs``), in START_STACK and END_STACK."""
    if len(rows) == 0 or runs.height == 0:
        return
    # The P/M rows are put in join order with one numpy lexsort (cheaper than polars'
    # multi-column sort on millions of rows); ties keep the rows' order.
    order = np.lexsort((starts, g))
    wanted = pl.DataFrame({"row": rows[order], "g": g[order], "start": starts[order]})
    # Both sides are sorted by (g, start); polars cannot verify that with `by`.
    found = wanted.join_asof(runs, on="start", by="g", strategy="backward", check_sortedness=False)
    inside = found["run_end"].fill_null(-1).to_numpy() > found["start"].to_numpy()
    row = found["row"].to_numpy()[inside]
    start_stack[row] = np.where(start_stack[row] != 0, start_stack[row], found["s0"].to_numpy()[inside])
    end_stack[row] = found["s1"].to_numpy()[inside]
