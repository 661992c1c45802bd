"""The exact spans a timeline page holds, read from the stored spans a batch of lanes at a time.

A page holds the exact spans of up to ``render.levels.BUDGET`` bytes' worth of lanes (some
340 K spans): read at once, sorted and turned into the page's columns, they and their copies
held several times that.  Here they are read ``SPAN_BATCH`` spans (whole lanes) at a time,
in the spans table's order (lane kind, lane id), and each batch's columns go straight into
arrays of the page's size: what is held beyond those is one batch.

What crosses lanes waits for the last batch: a P's or M's run gets the stacks of the G run it
shows (``run_stacks.copy_run_stacks``: the G runs and P/M runs are few columns of few rows),
and the titles are named once from every span's title key, so that they are interned in the
order the page made from all spans at once gives them (the same bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.errors import GoblueprintError
from goblueprint.render.lanes import Lane, key_titles, sorted_spans, state_names, title_keys
from goblueprint.render.levels import lane_keys
from goblueprint.render.run_stacks import copy_run_stacks, goroutine_runs, lane_stacks, proc_and_thread_runs
from goblueprint.timeline.detail_store import DetailStore
from goblueprint.timeline.model import LaneKind, Timeline

SPAN_BATCH = 1 << 13  # spans read at once (whole lanes: one lane with more is read alone)
# What the page makes of a span (a P's or M's spans name their goroutine in ``g``).
SPAN_COLUMNS = ("lane_kind", "lane_id", "start", "end", "state", "g", "label", "stack")


@dataclass
class PageSpans:
    """The page's exact spans, sorted as ``sorted_spans`` sorts them, as its columns (the
    page's own types: 37 bytes a span, what ``render.levels.SPAN_BYTES`` counts)."""

    start: np.ndarray  # f8, ns since the trace's start
    end: np.ndarray  # f8
    title: np.ndarray  # i4, string id (the intern function's)
    gid: np.ndarray  # i4, the span's goroutine, -1: none
    start_stack: np.ndarray  # u4, the Timeline's stack ids, 0: none (run_stacks)
    end_stack: np.ndarray  # u4
    state: np.ndarray  # u1, display state index (lanes.state_names)
    stacks: np.ndarray  # i8, the distinct stack ids of start_stack and end_stack, sorted

    def __len__(self) -> int:
        return len(self.start)


def span_gids(spans: pl.DataFrame) -> np.ndarray:
    """Per row of SPANS, its goroutine (-1: none): a G lane's or its ranges' or regions' own,
    none for a task, else the one running (P and M lanes); clipped to the page's i4."""
    kinds = spans["lane_kind"].to_numpy()
    lane_ids = spans["lane_id"].to_numpy()
    g = spans["g"].to_numpy()
    own_g = (kinds == LaneKind.G) | (kinds == LaneKind.GRANGE) | (kinds == LaneKind.REGION)
    gid = np.where(own_g, lane_ids, np.where(kinds == LaneKind.TASK, -1, g))
    return np.clip(gid, -1, 2**31 - 1)


def page_spans(
    tl: Timeline,
    store: DetailStore,
    lanes: list[Lane],
    exact: np.ndarray,
    intern: Callable[[str], int],
) -> tuple[PageSpans, list[Lane]]:
    """The exact spans of the lanes EXACT marks, read from STORE, and LANES with their row
    ranges into them (empty for the others: at the rows of the exact lanes before them in
    the spans' order, [0, 0) for a lane without spans).  Titles are interned with INTERN."""
    held = sorted(
        (lane for lane, whole in zip(lanes, exact.tolist(), strict=True) if whole and lane.hi > lane.lo),
        key=lambda lane: (int(lane.kind), lane.lane_id),
    )
    n = sum(lane.hi - lane.lo for lane in held)
    _names, code_to_index = state_names()
    start, end = np.empty(n, np.float64), np.empty(n, np.float64)
    title, gid = np.empty(n, np.int32), np.empty(n, np.int32)
    start_stack, end_stack = np.empty(n, np.uint32), np.empty(n, np.uint32)
    state = np.empty(n, np.uint8)
    # Title keys numbered as first met (the spans hold these numbers until every key is known).
    key_number: dict[int, int] = {}
    stacks: list[np.ndarray] = []
    runs: list[pl.DataFrame] = []
    pm_rows: list[np.ndarray] = []
    pm_g: list[np.ndarray] = []
    pm_start: list[np.ndarray] = []
    batches = list(_lane_batches(held))
    offsets = np.concatenate(([0], np.cumsum([sum(lane.hi - lane.lo for lane in b) for b in batches])))
    # The batches with P or M lanes first: the goroutines their runs show are then known, and
    # of the G lanes' runs only theirs are kept (few: most exact lanes are goroutines').
    shows_g = [any(lane.kind in (LaneKind.P, LaneKind.M) for lane in b) for b in batches]
    shown: np.ndarray | None = None
    # What a batch's spans are sorted in: a Timeline made once (a new one makes five empty tables).
    shell = Timeline()
    for b in sorted(range(len(batches)), key=lambda b: not shows_g[b]):
        batch, at = batches[b], int(offsets[b])
        if not shows_g[b] and shown is None:
            shown = unique(np.concatenate(pm_g)) if pm_g else np.zeros(0, np.int64)
        spans = sorted_spans(replace(shell, spans=store.lane_spans(lane_keys(batch), columns=SPAN_COLUMNS)))
        want = int(offsets[b + 1]) - at
        if spans.height != want:
            raise GoblueprintError(
                f"the stored spans of {len(batch)} lanes are {spans.height} rows, their counts say {want}: "
                f"the levels of detail in {store.path} do not match {store.spans_file}"
            )
        rows = slice(at, at + want)
        start[rows] = spans["start"].to_numpy() - tl.start_ns
        end[rows] = spans["end"].to_numpy() - tl.start_ns
        keys, key_of_row = np.unique(title_keys(spans), return_inverse=True)
        numbers = np.array([key_number.setdefault(k, len(key_number)) for k in keys.tolist()], np.int32)
        title[rows] = numbers[key_of_row.ravel()]
        gid[rows] = span_gids(spans)
        state[rows] = code_to_index[spans["state"].to_numpy()]
        s0, s1, g_running = lane_stacks(spans)
        start_stack[rows], end_stack[rows] = s0, s1
        stacks.append(unique(np.concatenate((s0, s1))))
        if shown is None or len(shown):
            runs.append(goroutine_runs(spans, g_running, s0, s1, only=shown))
        pm, g, st = proc_and_thread_runs(spans)
        pm_rows.append(pm + at)
        pm_g.append(g)
        pm_start.append(st)
    if runs:
        copy_run_stacks(
            # In (g, start) order, as the batches' order no longer gives it.
            pl.concat(runs).sort(["g", "start"]),
            np.concatenate(pm_rows),
            np.concatenate(pm_g),
            np.concatenate(pm_start),
            start_stack,
            end_stack,
        )
    # The titles interned in the order of their sorted keys, as ``span_titles`` gives them.
    keys = np.fromiter(key_number, dtype=np.int64, count=len(key_number))
    order = np.argsort(keys)
    string_ids = np.empty(len(keys), np.int32)
    string_ids[order] = [intern(t) for t in key_titles(tl, keys[order], lanes)]
    title[:] = string_ids[title]
    # P and M runs only take stacks G runs hold: the batches' stacks are all there are.
    used = unique(np.concatenate(stacks)).astype(np.int64) if stacks else np.zeros(0, np.int64)
    spans_out = PageSpans(start, end, title, gid, start_stack, end_stack, state, used)
    return spans_out, _moved(lanes, exact)


def _lane_batches(lanes: list[Lane]) -> Iterator[list[Lane]]:
    """LANES (in the spans table's order) cut into runs of at most SPAN_BATCH spans."""
    batch: list[Lane] = []
    size = 0
    for lane in lanes:
        if batch and size + lane.hi - lane.lo > SPAN_BATCH:
            yield batch
            batch, size = [], 0
        batch.append(lane)
        size += lane.hi - lane.lo
    if batch:
        yield batch


def _moved(lanes: list[Lane], exact: np.ndarray) -> list[Lane]:
    """LANES with their row ranges into the page's exact spans (see ``page_spans``)."""
    rows = sorted(
        ((int(lane.kind), lane.lane_id, lane.hi - lane.lo if whole else 0, k)
         for k, (lane, whole) in enumerate(zip(lanes, exact.tolist(), strict=True)) if lane.hi > lane.lo),
    )  # fmt: skip
    at: dict[int, tuple[int, int]] = {}
    end = 0
    for _kind, _id, n, k in rows:
        at[k] = (end, end + n)
        end += n
    # (A Lane made, not replace()d: that was 0.1 s of the 30.6 MB trace's ~5,000 lanes.)
    return [
        Lane(lane.kind, lane.lane_id, lane.name, lane.function, lane.group, *at.get(k, (0, 0)))
        for k, lane in enumerate(lanes)
    ]
