"""What `goblueprint capture` added to a program, told apart from the program itself.

A main package captured through the overlay runs capture's code in its own
process: ``0000_goblueprint_capture_*.go`` starts the trace during package
initialisation and waits for SIGINT/SIGTERM in a goroutine of its own, which
in turn makes os/signal start its goroutines.  None of that is the user's, and
the user's main goroutine, caught by the trace while still initialising, has
the runtime's init machinery (``runtime.doInit1``) as its oldest frame.

This module is the one place that decides, for every view (goroutine lists and
groups, the SQL tables, the timeline, pprof):

* a goroutine is capture's when its start stack or its creator's stack at the
  ``go`` statement holds a frame from a file whose name contains
  ``goblueprint_capture`` (the overlay files are named so; the test binaries
  get nothing of the kind).  Only goroutines created while the trace runs are
  judged, which is all of capture's: the trace starts before the overlay
  starts its goroutine;
* goroutine 1 is the program's main goroutine (the runtime creates it first,
  to run runtime.main); when Go's naming gives it a runtime frame as its start
  function (the trace began during package init), it is named ``main.main``;
* ``--show-capture`` (``show=True``) keeps capture's goroutines in every view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from goblueprint.timeline._api import G_NOT_EXIST, R_GOROUTINE, is_system_goroutine

CAPTURE_FILE_MARK = "goblueprint_capture"
MAIN_GOROUTINE = 1
MAIN_NAME = "main.main"


def is_capture_frame(file: str) -> bool:
    return CAPTURE_FILE_MARK in file


class CaptureMarker:
    """Fed by the single pass (``source.run_pass``) with each chunk's columns.

    Only creations are looked at (their two stacks), and each stack once, so the
    cost is per goroutine and stack, not per event.
    """

    def __init__(self) -> None:
        self.goroutines: set[int] = set()
        self._stack_marked: dict[int, bool] = {0: False}

    def _marked(self, stack: int, interner: Any) -> bool:
        found = self._stack_marked.get(stack)
        if found is None:
            frames = interner.stacks[stack]
            found = self._stack_marked[stack] = any(is_capture_frame(f.file) for f in frames)
        return found

    def columns(self, cols: dict[str, np.ndarray], interner: Any) -> None:
        created = np.flatnonzero((cols["resource_kind"] == R_GOROUTINE) & (cols["old_state"] == G_NOT_EXIST))
        if not len(created):
            return
        ids = cols["resource_id"][created].tolist()
        starts = cols["transition_stack"][created].tolist()  # the new goroutine's start stack
        creators = cols["stack"][created].tolist()  # the creator's stack at the go statement
        for gid, start, creator in zip(ids, starts, creators, strict=True):
            if self._marked(start, interner) or self._marked(creator, interner):
                self.goroutines.add(gid)

    def marks(self) -> CaptureMarks:
        return CaptureMarks(frozenset(self.goroutines))


def _cut_capture_frames(frames: pl.DataFrame, strings: list[str]) -> pl.DataFrame:
    """Each stack without capture's frames and what they called: its callers' part only.

    The main goroutine caught in init by the overlay has the stack trace.Start ←
    main.goblueprintStart ← main.init ← runtime.doInit1 ← runtime.main; the program
    was initialising package main, which is what is left.
    """
    marked = [i for i, text in enumerate(strings) if CAPTURE_FILE_MARK in text]
    if not marked or frames.height == 0:
        return frames
    cut = (
        frames.filter(pl.col("file").is_in(marked)).group_by("stack").agg(pl.col("depth").max().alias("_cut"))
    )
    if cut.height == 0:
        return frames
    joined = frames.join(cut, on="stack", how="left", maintain_order="left")
    kept = joined.filter(pl.col("_cut").is_null() | (pl.col("depth") > pl.col("_cut")))
    depth = (
        pl.when(pl.col("_cut").is_null())
        .then(pl.col("depth"))
        .otherwise(pl.col("depth") - pl.col("_cut") - 1)
    )
    return kept.with_columns(depth.cast(frames.schema["depth"]).alias("depth")).drop("_cut")


@dataclass(frozen=True)
class CaptureMarks:
    """Capture's goroutines in one trace, and how to leave them out of each result."""

    goroutines: frozenset[int] = field(default_factory=frozenset)

    @staticmethod
    def main_name(name: str) -> str:
        """Goroutine 1's name: Go's, unless that is a runtime frame the trace caught it in."""
        return MAIN_NAME if is_system_goroutine(name) else name

    def summary(self, summary: Any, *, show: bool = False) -> Any:
        """Drop capture's goroutines from a timeline.summary.Summary (in place) and name G1."""
        if not show:
            for gid in self.goroutines:
                summary.goroutines.pop(gid, None)
            for task in summary.tasks.values():
                task.goroutines -= self.goroutines
        main = summary.goroutines.get(MAIN_GOROUTINE)
        if main is not None:
            main.name = self.main_name(main.name)
        return summary

    def timeline(self, tl: Any, *, show: bool = False) -> Any:
        """Drop capture's goroutine lanes, their flows and instants (in place) and name G1's lane.

        P and M spans that ran a capture goroutine stay: the processor was busy all the same.
        """
        from goblueprint.timeline.model import LaneKind

        if not show and self.goroutines:
            hidden = sorted(self.goroutines)
            tl.spans = self.spans(tl.spans)
            tl.lanes = tl.lanes.filter(~self._on_hidden_lane())
            tl.flows = tl.flows.filter(~pl.col("g").is_in(hidden))
            tl.instants = tl.instants.filter(~pl.col("g").is_in(hidden))
        if not show:
            tl.stack_frames = _cut_capture_frames(tl.stack_frames, tl.strings)
        main_lane = (pl.col("lane_kind") == int(LaneKind.G)) & (pl.col("lane_id") == MAIN_GOROUTINE)
        rows = tl.lanes.filter(main_lane)
        if rows.height:
            name = self.main_name(rows["group"][0])
            tl.lanes = tl.lanes.with_columns(
                pl.when(main_lane)
                .then(pl.lit(f"G{MAIN_GOROUTINE} {name}"))
                .otherwise(pl.col("label"))
                .alias("label"),
                pl.when(main_lane).then(pl.lit(name)).otherwise(pl.col("group")).alias("group"),
                pl.when(main_lane).then(pl.lit(False)).otherwise(pl.col("system")).alias("system"),
            )
        return tl

    def _on_hidden_lane(self) -> pl.Expr:
        from goblueprint.timeline.model import LaneKind

        g_lanes = [int(LaneKind.G), int(LaneKind.GRANGE), int(LaneKind.REGION)]
        return pl.col("lane_kind").is_in(g_lanes) & pl.col("lane_id").is_in(sorted(self.goroutines))

    def spans(self, spans: pl.DataFrame, *, show: bool = False) -> pl.DataFrame:
        """Timeline spans (any part of them) without those on capture's goroutine lanes."""
        if show or not self.goroutines:
            return spans
        return spans.filter(~self._on_hidden_lane())

    def events(self, df: pl.DataFrame, *, show: bool = False) -> pl.DataFrame:
        """The SQL events table, coded as EventRows makes it (resource_kind a code),
        without the events of capture's goroutines."""
        if show or not self.goroutines:
            return df
        hidden = sorted(self.goroutines)
        about_goroutine = pl.col("resource_kind") == R_GOROUTINE
        about_hidden = about_goroutine & pl.col("resource_id").is_in(hidden)
        return df.filter(~(pl.col("g").is_in(hidden).fill_null(False) | about_hidden.fill_null(False)))

    def stays(self, stays: pl.DataFrame, stacks: Sequence[Any], *, show: bool = False) -> pl.DataFrame:
        """pprof stays (pprof.STAYS_SCHEMA) without capture's goroutines nor stacks inside
        capture's code; STACKS are the frames of each stack id (the pass Interner's ``stacks``).
        Each stack is judged once, and the stays filtered by their columns."""
        if show or stays.height == 0:
            return stays
        used = stays["stack"].unique().to_list()
        capture = [sid for sid in used if any(is_capture_frame(f.file) for f in stacks[sid])]
        hidden = sorted(self.goroutines)
        return stays.filter(~pl.col("g").is_in(hidden) & ~pl.col("stack").is_in(capture))
