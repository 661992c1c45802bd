"""Which levels of detail (goblueprint.timeline.detail) and exact spans a timeline page carries.

The page's size must not grow with the trace: a lane carries

* level 0 always: at most ``COLUMNS`` runs (one per level-0 bucket at worst);
* each finer level while it has at most ``PER_LANE`` runs, coarse to fine, and while the
  page's ``BUDGET`` of bytes for finer levels and exact spans lasts;
* its exact spans (with titles, stacks, events) if it has at most ``PER_LANE`` of them and
  the budget lasts.

So the typed arrays of a page hold at most ``lanes * COLUMNS * RUN_BYTES + BUDGET`` bytes of
span data before compression, whatever the trace's length.  What a page leaves out, the
viewer says, and ``goblueprint trace view`` serves it from the ingested tables on demand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from goblueprint.render.lanes import Lane, state_names
from goblueprint.timeline.detail import Levels
from goblueprint.timeline.detail_store import DetailStore

PER_LANE = 2048  # runs of one lane at one finer level, or exact spans of one lane, at most
BUDGET = 12 * 2**20  # bytes of finer levels and exact spans a page holds beyond level 0
RUN_BYTES = 10  # b0 u32, b1 u32, state u8, fill u8
SPAN_BYTES = 37  # start f8, end f8, label i4, stack i4, end_stack i4, gid i4, state u1 (timeline_html)


@dataclass
class PageDetail:
    levels: Levels
    runs: list[pl.DataFrame]  # per level: the embedded runs (lane = display index), by lane, b0
    exact: np.ndarray  # bool per lane: its exact spans are embedded
    counts: np.ndarray  # spans per lane in the timeline
    budget_left: int


def lane_keys(lanes: list[Lane]) -> pl.DataFrame:
    """(lane_kind, lane_id) -> display index, for joins."""
    return pl.DataFrame(
        {
            "lane_kind": [int(lane.kind) for lane in lanes],
            "lane_id": [lane.lane_id for lane in lanes],
            "lane": list(range(len(lanes))),
        },
        schema={"lane_kind": pl.UInt8, "lane_id": pl.Int64, "lane": pl.UInt32},
    )


def display_runs(rows: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """Stored runs (lane_kind, lane_id, b0, b1, state code, fill) as the page's: display lane
    and display state, sorted by lane then b0.

    Mapping the state after the levels are made is the same as before: a lane only holds
    the states of its kind, and on those the map from code to display index is one to one
    and keeps their order, so merges and ties (the lower state wins) come out the same.
    """
    _names, code_to_index = state_names()
    to_index = pl.Series("i", code_to_index, dtype=pl.UInt8)
    return (
        rows.join(keys, on=["lane_kind", "lane_id"])
        .select("lane", "b0", "b1", "state", "fill")
        .with_columns(pl.col("state").cast(pl.UInt32).map_batches(to_index.gather, return_dtype=pl.UInt8))
        .sort(["lane", "b0"])
    )


def _per_lane(counts: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """COUNTS (lane_kind, lane_id, n) by display lane: (lane, len)."""
    return counts.join(keys, on=["lane_kind", "lane_id"]).select("lane", pl.col("n").alias("len"))


def plan_page(store: DetailStore, lanes: list[Lane], *, served: bool = False) -> PageDetail:
    """The levels and exact lanes of a page, under PER_LANE and BUDGET (see the module doc),
    read from STORE: only the runs the page keeps are read, never a whole level.

    SERVED: the page of ``trace view``: level 0 only, the server answers the rest.
    """
    keys = lane_keys(lanes)
    counts = np.array([lane.hi - lane.lo for lane in lanes], dtype=np.int64)
    level0 = display_runs(store.lane_runs(keys, 0), keys)
    if served:
        return PageDetail(
            levels=store.levels,
            runs=[level0],
            exact=np.zeros(len(lanes), dtype=bool),
            counts=counts,
            budget_left=0,
        )
    budget = BUDGET
    # Exact spans first for the lanes small enough, fewest spans first: a reader zooming in
    # needs titles and stacks more than a finer summary of a lane already exact.
    exact = np.zeros(len(lanes), dtype=bool)
    for k in np.argsort(counts, kind="stable").tolist():
        cost = int(counts[k]) * SPAN_BYTES
        if counts[k] > PER_LANE or cost > budget:
            break
        exact[k] = True
        budget -= cost
    out: list[pl.DataFrame] = [level0]
    open_lanes = _per_lane(store.run_counts(0), keys).filter(pl.col("len") <= PER_LANE)["lane"]
    for k in range(1, store.levels.count):
        if open_lanes.len() == 0:
            break
        per_lane = _per_lane(store.run_counts(k), keys).filter(pl.col("lane").is_in(open_lanes.implode()))
        fits = per_lane.filter(pl.col("len") <= PER_LANE).sort(["len", "lane"])
        # The budget goes to the lanes that need the fewest runs, as far as it reaches.
        fits = fits.filter((pl.col("len").cum_sum() * RUN_BYTES) <= budget)
        budget -= int(fits["len"].sum()) * RUN_BYTES
        chosen = keys.filter(pl.col("lane").is_in(fits["lane"].implode()))
        out.append(display_runs(store.lane_runs(chosen, k), keys))
        open_lanes = fits["lane"]
    return PageDetail(levels=store.levels, runs=out, exact=exact, counts=counts, budget_left=budget)
