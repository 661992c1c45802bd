"""Where events come from, and one pass that feeds them to several consumers.

A consumer has ``event(ev)`` and ``step(ev, kind, st)`` (the same, with the
event's kind as an int and its state transition, or None, computed once per
pass: the Event API computes them afresh on each call); everything that needs the event stream (the
timeline builder, Go's summarizer, the pprof stay collector) runs in the same
pass so a large trace is decoded once.
"""

from __future__ import annotations

import errno
import gc
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goblueprint.errors import PathError, TraceError
from goblueprint.timeline._api import G_NOT_EXIST, K_STATE, K_SYNC
from goblueprint.timeline.capture_marks import CaptureMarker, CaptureMarks
from goblueprint.trace.events import KIND_OF

# Event kind per wire type as plain ints: the reader's Event gives its kind through a
# property returning an IntEnum member; the pass reads the slots directly instead.
_KIND_INT: tuple[int, ...] = tuple(int(k) for k in KIND_OF)


def open_events(source: Any) -> Iterable[Any]:
    """Events of a trace given as a path, bytes, a Reader or any iterable of events."""
    if isinstance(source, str | os.PathLike):
        from goblueprint.trace.reader import open_trace

        path = Path(source)
        if path.is_dir():  # mmap of a directory would fail with a less telling errno
            raise PathError(path, errno.EISDIR)
        return open_trace(path)
    if isinstance(source, bytes | bytearray | memoryview):
        from goblueprint.trace.reader import Reader

        return Reader(source)
    return source


@dataclass
class PassResult:
    events: int  # events delivered
    valid_events: int  # events up to the last Sync when the trace broke (else == events)
    first_time: int
    last_time: int  # time of the last delivered event
    valid_last_time: int  # time of the last valid event
    error: TraceError | None
    go_version: str = ""  # trace format version, "1.22" ... (from the reader's header), "" if unknown
    # What goblueprint capture added to the program: every view leaves it out through these.
    marks: CaptureMarks = field(default_factory=CaptureMarks)


def run_pass(
    source: Any,
    consumers: list[Any],
    progress: Callable[[int], None] | None = None,
) -> PassResult:
    """Feed every event to every consumer.

    A trace that breaks part-way is handled as ``go tool trace`` does: the events
    before the error are kept, the error is returned, and ``valid_events`` counts
    the events up to the last Sync (the last complete generation).  If it breaks
    before any event, the error is raised.
    """
    feeds = [c.step for c in consumers]
    # Not one more consumer: it would cost a call per event; it needs goroutine creations only.
    marker = CaptureMarker()
    kinds = _KIND_INT
    n = 0
    valid = 0
    first = last = valid_last = 0
    error: TraceError | None = None
    opened = open_events(source)
    version = getattr(opened, "version", None)
    events: Iterator[Any] = iter(opened)
    # The pass allocates millions of small objects and makes no cycles worth collecting;
    # the cyclic GC would rescan all live ones again and again (quadratic on big traces).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for ev in events:
            try:  # the reader's Event
                t = ev.ts
                kind = kinds[ev.typ]
            except AttributeError:  # any other object with the Event API
                t = ev.time
                kind = int(ev.kind)
            if n == 0:
                first = t
            last = t
            n += 1
            st = ev.state_transition() if kind == K_STATE else None
            for feed in feeds:
                feed(ev, kind, st)
            if st is not None and st.old == G_NOT_EXIST:
                marker.created(ev, st)
            if kind == K_SYNC:
                valid = n
                valid_last = t
            if progress is not None and n & 0xFFFF == 0:
                progress(n)
    except TraceError as exc:
        if getattr(opened, "partial", False):
            raise  # a partial Reader raises only when nothing before the failure is usable
        error = exc
    finally:
        if gc_was_enabled:
            gc.enable()
    if error is None:  # a Reader opened with partial=True ends quietly and keeps its error
        error = getattr(opened, "error", None)
    if error is None:
        valid, valid_last = n, last
    elif n == 0:
        raise error  # e.g. not a trace, or an unsupported version: the reader's own words
    elif valid == 0:
        raise TraceError(
            f"failed to parse any useful part of the trace: {error.message}",
            offset=error.offset, generation=error.generation, m=error.m,
        ) from error  # fmt: skip
    go_version = f"1.{version}" if isinstance(version, int) else ""
    return PassResult(n, valid, first, last, valid_last, error, go_version, marker.marks())
