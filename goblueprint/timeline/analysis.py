"""One pass over a trace that yields everything the trace commands need.

The timeline, Go's goroutine summary and the pprof stays are all built while
the events stream by, so a trace is decoded once whatever is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from goblueprint.timeline.builder import TimelineBuilder
from goblueprint.timeline.mmu import Series, UtilCollector
from goblueprint.timeline.model import Timeline
from goblueprint.timeline.pprof import StayCollector, StayTables, interned_stack_frames
from goblueprint.timeline.source import PassResult, run_pass
from goblueprint.timeline.summary import Summarizer, Summary
from goblueprint.timeline.tables import timeline_stack_ids, with_timeline_stacks


@dataclass
class Analysis:
    summary: Summary
    timeline: Timeline | None
    result: PassResult
    utilization: list[Series] | None = None  # Go's mutator utilization functions, if asked
    profiles: StayTables | None = None  # the stays of the pprof types asked for, as tables


def analyse(
    source: Any,
    *,
    timeline: bool = True,
    pprof_types: Iterable[str] = (),
    progress: Callable[[int], None] | None = None,
    show_capture: bool = False,
    mmu_flags: int | None = None,
) -> Analysis:
    """One pass; ``mmu_flags`` (Go's UtilFlags) also collects the mutator utilization."""
    summarizer = Summarizer()
    consumers: list[Any] = [summarizer]
    builder = TimelineBuilder() if timeline else None
    if builder is not None:
        consumers.append(builder)
    types = list(pprof_types)
    stays = StayCollector(types) if types else None
    if stays is not None:
        consumers.append(stays)
    util = UtilCollector(mmu_flags) if mmu_flags is not None else None
    if util is not None:
        consumers.append(util)
    result = run_pass(source, consumers, progress)
    summary = result.marks.summary(summarizer.finalize(), show=show_capture)
    stacks = result.interner.stacks
    stays_table = result.marks.stays(stays.frame(), stacks, show=show_capture) if stays is not None else None
    lut = None
    if stays_table is not None and builder is not None:
        # Stays name the Timeline's stacks: interned in it before finish() makes its stack frames.
        lut = timeline_stack_ids(builder, stacks, stays_table["stack"].unique().to_numpy())
    tl = builder.finish(result.last_time) if builder is not None else None
    if tl is not None:
        tl.go_version = result.go_version
        result.marks.timeline(tl, show=show_capture)
    profiles = None
    if stays_table is not None:
        if tl is not None and lut is not None:
            stays_table = with_timeline_stacks(stays_table, lut)
            stack_frames, strings = tl.stack_frames, tl.strings
        else:
            stack_frames, strings = interned_stack_frames(stacks, stays_table["stack"].unique().to_list())
        profiles = StayTables.of_pass(stays_table, summary, stack_frames, strings, result)
    return Analysis(summary, tl, result, util.finish() if util is not None else None, profiles)
