"""Where events come from, and one pass that feeds them to several consumers.

Everything that needs the event stream (the timeline builder, Go's summarizer,
the pprof stay collector, the SQL tables) runs in the same pass, so a large
trace is decoded once.  The pass goes chunk by chunk over the reader's columns
(at most 32768 events, never across a generation; each Sync alone): a columnar
consumer has ``columns(cols, interner)`` and does its per-event work in a
compiled kernel; a consumer with ``step(ev, kind, st)`` (the event's kind as an
int and its state transition, or None, computed once per pass) is fed Events.
"""

from __future__ import annotations

import errno
import gc
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from goblueprint.errors import PathError, TraceError
from goblueprint.timeline._api import K_STATE, K_SYNC
from goblueprint.timeline.capture_marks import CaptureMarker, CaptureMarks
from goblueprint.timeline.read_ahead import read_ahead
from goblueprint.trace.events import KIND_OF
from goblueprint.trace.store import Interner, chunk_columns, chunks_of

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
    # The pass's strings and stacks: the ids in every consumer's columns name entries of it.
    interner: Interner = field(default_factory=Interner)


def run_pass(
    source: Any,
    consumers: list[Any],
    progress: Callable[[int], None] | None = None,
) -> PassResult:
    """Feed every event to every consumer.

    The reader's column chunks are the unit: a consumer with ``columns(cols, interner)``
    gets each chunk's store columns (``goblueprint.trace.store.chunk_columns``: strings and
    stacks are ids of the pass's Interner), the first such consumer on a thread beside the
    others (so the costliest goes first); one with only ``step(ev, kind, st)`` gets each
    event as an Event, and Events are made only while such a consumer takes part.

    A trace that breaks part-way is handled as ``go tool trace`` does: the events
    before the error are kept, the error is returned, and ``valid_events`` counts
    the events up to the last Sync (the last complete generation).  If it breaks
    before any event, the error is raised.
    """
    by_columns = [c.columns for c in consumers if hasattr(c, "columns")]
    by_events = [c.step for c in consumers if not hasattr(c, "columns")]
    interner = Interner()
    marker = CaptureMarker()  # needs goroutine creations only: per chunk, from the columns
    n = 0
    valid = 0
    first = last = valid_last = 0
    error: TraceError | None = None
    opened = open_events(source)
    version = getattr(opened, "version", None)
    # An Event-by-Event pass allocates millions of small objects and makes no cycles worth
    # collecting; the cyclic GC would rescan all live ones again and again.
    gc_was_enabled = gc.isenabled()
    if by_events:
        gc.disable()
    # With several columnar consumers the first is fed on a thread of its own while the others
    # take the same chunk (their loops are compiled without the GIL; each keeps its own state
    # and only reads the chunk's columns and the Interner, which change between chunks only).
    beside = ThreadPoolExecutor(1, thread_name_prefix="pass") if len(by_columns) > 1 else None
    # The reader orders the next chunk's events on a thread of its own (its loops are compiled
    # without the GIL) while the consumers take this one: read one after the other, the
    # reading was a fifth of the pass's time with every consumer waiting.
    chunks = read_ahead(chunks_of(opened))
    try:
        for chunk in chunks:
            size = len(chunk)
            if not size:
                continue
            cols = chunk_columns(chunk, interner)
            first = beside.submit(by_columns[0], cols, interner) if beside is not None else None
            try:
                for feed in by_columns[1:] if first is not None else by_columns:
                    feed(cols, interner)
                if by_events:
                    _feed_events(chunk, by_events)
                marker.columns(cols, interner)
            finally:
                if first is not None:
                    first.result()  # the chunk is done with before the next is read
            if n == 0:
                first = int(cols["time"][0])
            last = int(cols["time"][-1])
            syncs = np.flatnonzero(cols["kind"] == K_SYNC)
            if len(syncs):
                valid = n + int(syncs[-1]) + 1
                valid_last = int(cols["time"][syncs[-1]])
            before = n
            n += size
            if progress is not None and n >> 16 != before >> 16:
                progress(n)
    except TraceError as exc:
        if getattr(opened, "partial", False):
            raise  # a partial Reader raises only when nothing before the failure is usable
        error = exc
    finally:
        chunks.close()
        if beside is not None:
            beside.shutdown(wait=True)
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
    return PassResult(n, valid, first, last, valid_last, error, go_version, marker.marks(), interner)


def _feed_events(chunk: Any, feeds: list[Callable[[Any, int, Any], None]]) -> None:
    kinds = _KIND_INT
    for ev in chunk.events():
        kind = kinds[ev.typ]
        st = ev.state_transition() if kind == K_STATE else None
        for feed in feeds:
            feed(ev, kind, st)
