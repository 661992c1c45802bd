"""The timeline page reads the wake-up arrows a batch at a time: the same page as from the whole
table, and none of the arrows held beyond a batch unless the page keeps them."""

from __future__ import annotations

import lzma
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from test_payload import decode

from goblueprint.render import levels as page_levels
from goblueprint.render import timeline_html
from goblueprint.render.timeline_html import render_timeline_html
from goblueprint.timeline import batches
from goblueprint.timeline.model import Timeline, build_timeline

GOLDEN = Path(__file__).resolve().parents[1] / "timeline" / "golden_builder"
ROWS = 1000  # rows a batch: the trace's 13 K flows in 14 batches


@pytest.fixture(scope="module")
def timeline() -> Timeline:
    return build_timeline(lzma.decompress((GOLDEN / "sched-go1.22.trace.xz").read_bytes()))


def page_read_in_batches(tl: Timeline, monkeypatch: pytest.MonkeyPatch, rows: int) -> tuple[str, list[int]]:
    """The page of TL with the flows read ROWS rows at a time, and the rows of each batch read."""
    seen: list[int] = []
    real = batches.frame_batches

    def spy(frame: pl.LazyFrame, **kw: Any) -> Iterator[pl.DataFrame]:
        for part in real(frame, **kw):
            seen.append(part.height)
            yield part

    with monkeypatch.context() as m:
        m.setattr(batches, "BATCH_ROWS", rows)
        m.setattr(timeline_html, "frame_batches", spy)
        return render_timeline_html(tl, "t"), seen


@pytest.mark.parametrize(
    ("budget", "held"), [(12 * 2**20, "all"), (2**20, "between exact lanes"), (2**16, "none")]
)
def test_arrows_read_in_batches_make_the_page_the_whole_table_makes(
    budget: int, held: str, timeline: Timeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page_levels, "BUDGET", budget)
    want, whole = page_read_in_batches(timeline, monkeypatch, 1 << 40)
    got, seen = page_read_in_batches(timeline, monkeypatch, ROWS)
    assert got == want  # the same bytes: arrows, their order (ties across batches) and the rest
    header, _ = decode(got)
    arrows = timeline.flows.filter(pl.col("to_time") >= 0).height
    assert header["flows_whole"] == (held == "all") and (header["flows"]["n"] > 0) == (held != "none")
    # Read whole: one batch to count, and one more for the kept arrows if there are any.
    assert len(whole) == (1 if held == "none" else 2) and max(seen) <= ROWS
    if held == "none":
        # Counting stopped once the arrows between exact lanes overflowed the budget.
        assert 0 < len(seen) < arrows / ROWS
    else:  # every arrow counted, then read again for those the page keeps
        assert sum(seen) == 2 * arrows and len(seen) >= 2 * (arrows // ROWS)


def test_batches_of_placed_arrows_keep_their_place_in_the_whole_table(
    timeline: Timeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The page sorts arrows by time, ties in the table's order: each batch's arrows are
    # numbered from where the batch starts in the table, not from 0.
    from polars.testing import assert_frame_equal

    from goblueprint.render.flow_lanes import placed_flows
    from goblueprint.render.lanes import arrange

    lanes = arrange(timeline)
    whole = placed_flows(timeline.flows.lazy(), lanes).collect()
    monkeypatch.setattr(batches, "BATCH_ROWS", ROWS)
    parts = [p.collect() for p in timeline_html._placed_batches(timeline.flows.lazy(), lanes)]
    assert len(parts) > 10
    # Joined to the lanes, a batch's rows come in no set order: compared by number.
    assert_frame_equal(
        pl.concat(parts).sort("_row"), whole.with_columns(pl.col("_row").cast(pl.Int64)).sort("_row")
    )
