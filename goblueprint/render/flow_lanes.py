"""Where a wake-up arrow is drawn: from the waker's lane (its G, else its P) to the woken G's
lane; a flow without a goroutine (a steal from the lab's records) ends on its to_p's P lane.

Shared by the page (the arrows it embeds) and the server of ``trace view`` (the arrows of a
window), so both place them alike.  Lazy in and out: a caller filters the flows table
first (by time, so a Parquet scan reads only the row groups of a window) and collects
only what it keeps.
"""

from __future__ import annotations

import polars as pl

from goblueprint.render.lanes import Lane
from goblueprint.timeline.model import LaneKind

# The columns of the flows table placed_flows reads.
PLACED_COLUMNS = ("from_time", "to_time", "from_g", "from_p", "g", "to_p")


def placed_flows(flows: pl.LazyFrame, lanes: list[Lane]) -> pl.LazyFrame:
    """FLOWS (the flows table's columns) that have an end, as ``_row`` (their order in FLOWS),
    ``from_time``, ``to_time``, ``from_lane`` and ``to_lane`` (indexes into LANES); flows
    with an end on no lane are left out."""

    def lane_of(kind: LaneKind, column: str) -> pl.LazyFrame:
        ids = [(lane.lane_id, k) for k, lane in enumerate(lanes) if lane.kind == kind]
        return pl.DataFrame(ids, schema={column: pl.Int64, f"_{column}": pl.Int32}, orient="row").lazy()

    return (
        flows.filter(pl.col("to_time") >= 0)
        .select(PLACED_COLUMNS)
        .with_row_index("_row")
        .join(lane_of(LaneKind.G, "from_g"), on="from_g", how="left")
        .join(lane_of(LaneKind.P, "from_p"), on="from_p", how="left")
        .join(lane_of(LaneKind.G, "g"), on="g", how="left")
        .join(lane_of(LaneKind.P, "to_p"), on="to_p", how="left")
        .select(
            "_row",
            "from_time",
            "to_time",
            pl.coalesce("_from_g", "_from_p").alias("from_lane"),
            # To a goroutine: its lane or nothing; without one (g < 0): the to_p's P lane.
            pl.when(pl.col("g") >= 0).then(pl.col("_g")).otherwise(pl.col("_to_p")).alias("to_lane"),
        )
        .drop_nulls(["from_lane", "to_lane"])
    )
