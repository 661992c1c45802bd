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
from goblueprint.timeline.pprof import StayCollector, StayTables, stays_frame
from goblueprint.timeline.source import PassResult, run_pass
from goblueprint.timeline.summary import Summarizer, Summary


@dataclass
class Analysis:
    summary: Summary
    timeline: Timeline | None
    stays: StayCollector | None
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
    stays_table = interner = None
    if stays is not None:
        # Stays name their stacks by the timeline's ids; without a timeline, a builder that sees
        # no event interns them.  Before finish(): the stack frames it returns must hold them all.
        interner = builder if builder is not None else TimelineBuilder()
        result.marks.stays(stays, show=show_capture)
        stays_table = stays_frame(stays, interner.stack_id)
    tl = builder.finish(result.last_time) if builder is not None else None
    if tl is not None:
        tl.go_version = result.go_version
        result.marks.timeline(tl, show=show_capture)
    profiles = None
    if stays_table is not None and interner is not None:
        stacks = tl if tl is not None else interner.finish(result.last_time)
        profiles = StayTables.of_pass(stays_table, summary, stacks, result)
    return Analysis(summary, tl, stays, result, util.finish() if util is not None else None, profiles)
