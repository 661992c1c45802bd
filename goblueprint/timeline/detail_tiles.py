"""The levels of detail of a lane too long to hold at once, made a tile of time at a time.

A busy trace has lanes of tens of millions of spans (a P, the trace's GC lane); summarising
one whole (timeline.detail: merged spans, then runs per level) holds several arrays of its
length at once, gigabytes.  Here the lane's rows (in start order, as the ingested spans
table has them) are read ``TILE_ROWS`` at a time and cut at the level-0 bucket boundaries
(a boundary at every level: each level's buckets nest in the coarser one's), so what is held
is one tile's spans and runs:

* the spans are merged per state as ``merge_overlaps`` does, the merged span still open at
  a tile's end carried to the next tile with its true start (``detail_kernel.merge_tile``);
* each tile's merged spans give its runs at every level (``detail.level_columns``), the
  buckets before the tile (from a carried span's start) left out;
* a run ending at a tile's edge joins the next tile's first run when they agree in state and
  fill, so the runs are those of the whole lane.

The runs are the same as the whole lane's: a bucket's summary depends only on the merged
spans overlapping it, and the ones the tile holds are the whole lane's, true starts included
(the order of overlapping full ranges goes by start, timeline.detail).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from goblueprint.errors import GoblueprintError
from goblueprint.timeline.detail import Levels, level_columns
from goblueprint.timeline.read_ahead import read_ahead

# Spans of a long lane read at once. At 250_000 a tile's runs at every level, with the next
# tile read ahead, held ~20-50 MB more at the levels' peak on a 46 MB trace (a run of only
# the levels: 230-238 MB against 254-303), for ~0.3 CPU s more of its ~4.5.
TILE_ROWS = 65_536
_STATES = 256


@dataclass
class _Runs:
    """Runs of one lane at one level as columns: b0, b1, state, fill."""

    b0: np.ndarray
    b1: np.ndarray
    state: np.ndarray
    fill: np.ndarray

    def __len__(self) -> int:
        return len(self.b0)

    def cut(self, lo: int, hi: int | None = None) -> _Runs:
        return _Runs(self.b0[lo:hi], self.b1[lo:hi], self.state[lo:hi], self.fill[lo:hi])

    @staticmethod
    def joined(parts: list[_Runs]) -> _Runs:
        return _Runs(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("b0", "b1", "state", "fill")))


@dataclass
class _LevelSink:
    """One level's runs of the lane as they come, tile by tile: the last run held back until
    the next tile says whether it goes on; whole row groups handed to WRITE."""

    write: Callable[[_Runs], None]
    group: int
    held: list[_Runs] = field(default_factory=list)
    rows: int = 0  # runs written or held
    last: _Runs | None = None
    ready: int = 0  # runs in held (counted as they come: a coarse level's tiles add a few each)

    def add(self, runs: _Runs) -> None:
        if len(runs) == 0:
            return
        if self.last is not None:
            if (
                runs.b0[0] == self.last.b1[0]
                and runs.state[0] == self.last.state[0]
                and runs.fill[0] == self.last.fill[0]
            ):
                runs.b0[0] = self.last.b0[0]  # the held run goes on into this tile
                self.rows -= 1
            else:
                self.held.append(self.last)
                self.ready += 1
        self.held.append(runs.cut(0, -1))
        self.ready += len(runs) - 1
        self.last = runs.cut(len(runs) - 1)
        self.rows += len(runs)
        if self.ready >= self.group:
            whole = _Runs.joined(self.held)
            cut = self.ready - self.ready % self.group
            self.write(whole.cut(0, cut))
            self.held = [whole.cut(cut)]
            self.ready -= cut

    def close(self) -> None:
        if self.last is not None:
            self.held.append(self.last)
        if self.held:
            whole = _Runs.joined(self.held)
            if len(whole):
                self.write(whole)
        self.held, self.last, self.ready = [], None, 0


def long_lane_runs(
    spans: pl.LazyFrame,
    rows: tuple[int, int],
    lane: tuple[int, int],
    origin: int,
    levels: Levels,
    write: Callable[[int, pl.DataFrame], None],
    group: int,
) -> list[int]:
    """The runs of every level of LANE (lane_kind, lane_id), whose spans are ROWS [lo, hi) of
    SPANS (a scan of a spans table: lane_kind, lane_id, start, end, state; a lane's rows in
    start order), times ORIGIN-relative; each level's runs handed to WRITE(level, frame) in
    bucket order, in frames of whole GROUPs of rows but the last.  Returns the runs per level."""
    from goblueprint.trace import kernels

    kind, lane_id = lane

    def writer(level: int) -> Callable[[_Runs], None]:
        def put(r: _Runs) -> None:
            n = len(r)
            write(
                level,
                pl.DataFrame(
                    {
                        "lane_kind": np.full(n, kind, np.uint8),
                        "lane_id": np.full(n, lane_id, np.int64),
                        "b0": r.b0,
                        "b1": r.b1,
                        "state": r.state,
                        "fill": r.fill,
                    }
                ),
            )

        return put

    sinks = [_LevelSink(writer(k), group) for k in range(levels.count)]
    open_on = np.zeros(_STATES, np.bool_)
    open_start = np.zeros(_STATES, np.int64)
    open_reach = np.zeros(_STATES, np.int64)
    pending = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint8))
    t0: int | None = None  # where the tile begins (None: before the lane's first span)
    lo, hi = rows
    for off, part in _tile_reads(spans, lo, hi):
        if part.height == 0 or not ((part["lane_kind"] == kind).all() and (part["lane_id"] == lane_id).all()):
            raise GoblueprintError(f"spans table: rows {off}.. are not all of lane {kind}/{lane_id}")
        start = np.concatenate([pending[0], part["start"].to_numpy() - origin])
        end = np.concatenate([pending[1], part["end"].to_numpy() - origin])
        state = np.concatenate([pending[2], part["state"].cast(pl.UInt8).to_numpy()])
        if len(start) > 1 and bool((start[1:] < start[:-1]).any()):
            raise GoblueprintError(f"spans table: lane {kind}/{lane_id} is not in start order")
        if off + TILE_ROWS >= hi:  # the lane's last rows: one tile reaching past every end
            reach = max(int(end.max()), int(start.max()), int(open_reach.max()))
            t1 = (reach // levels.width0 + 1) * levels.width0
        else:
            t1 = int(start[-1]) // levels.width0 * levels.width0
            if t0 is not None and t1 <= t0:  # no boundary passed yet: read on
                pending = (start, end, state)
                continue
        cut = int(np.searchsorted(start, t1, side="left"))
        pending = (start[cut:], end[cut:], state[cut:])
        _tile(
            kernels.get(),
            start[:cut],
            end[:cut],
            state[:cut],
            t0,
            t1,
            levels,
            sinks,
            (open_on, open_start, open_reach),
        )
        t0 = t1
    if len(pending[0]) or open_on.any():
        raise GoblueprintError(f"spans table: lane {kind}/{lane_id} left spans outside its tiles")
    for sink in sinks:
        sink.close()
    return [sink.rows for sink in sinks]


def _tile_reads(spans: pl.LazyFrame, lo: int, hi: int) -> Iterator[tuple[int, pl.DataFrame]]:
    """Rows [LO, HI) of SPANS (the lane's columns), TILE_ROWS at a time with their first row;
    the next tile read on a thread of its own while this one is summarised (read_ahead: polars
    reads without the GIL): what is held is one tile more."""

    cols = spans.select("lane_kind", "lane_id", "start", "end", "state")  # one plan for every tile

    def reads() -> Iterator[tuple[int, pl.DataFrame]]:
        for off in range(lo, hi, TILE_ROWS):
            yield off, cols.slice(off, min(TILE_ROWS, hi - off)).collect()

    return read_ahead(reads())


def _tile(
    k: object,
    start: np.ndarray,
    end: np.ndarray,
    state: np.ndarray,
    t0: int | None,
    t1: int,
    levels: Levels,
    sinks: list[_LevelSink],
    carried: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """One tile [T0, T1): its merged spans (with the carried ones) and their runs, to SINKS."""
    n = len(start)
    out = (np.empty(n + _STATES, np.int64), np.empty(n + _STATES, np.int64), np.empty(n + _STATES, np.uint8))
    got = k.merge_tile(start, end, state, t1, *carried, *out)  # type: ignore[attr-defined]
    if got < 0:
        raise GoblueprintError("spans table: a lane is not in start order")
    m_start, m_end, m_state = (c[:got] for c in out)
    order = np.argsort(m_state, kind="stable")  # by state, each state's by start
    start = np.maximum(m_start[order], 0)  # as runs() clips a span before the origin
    end, st = m_end[order], m_state[order]
    keep = end > start
    cols = (np.zeros(int(keep.sum()), np.uint32), start[keep], end[keep], st[keep])
    for level, (sink, got_runs) in enumerate(
        zip(sinks, level_columns(cols, levels.width0, levels.count), strict=True)
    ):
        width = levels.width(level)
        runs = _Runs(*(c.copy() for c in got_runs[1:]))
        if t0 is not None:  # a carried span's buckets before the tile were the tile's before
            lo = t0 // width
            keep = runs.b1 > lo
            runs = _Runs(np.maximum(runs.b0[keep], lo), runs.b1[keep], runs.state[keep], runs.fill[keep])
        sink.add(runs)
