"""goblueprint trace stats: what a trace holds, and how fast we read it.

Streams the trace once (memory bounded by one generation): events counted as
Go's reader yields them (equal to the ``events=`` of go-reference-parse), by
kind; distinct goroutines as Go's summary counts them (every goroutine a state
transition names, including ones that never run while traced), Ps and Ms seen
as events' scheduling context;
generations; the time span; file size, parse time and throughput.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import TYPE_CHECKING

from goblueprint.cli._partial import add_trace_argument, finish, open_input_trace

if TYPE_CHECKING:
    from goblueprint.trace.reader import Reader

HELP = "event counts by kind, goroutines/Ps/Ms, generations, time span, parse speed"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_trace_argument(parser, "Go execution trace (Go 1.22+)")
    parser.add_argument("--json", action="store_true", help="print JSON (sorted keys) instead of a table")


def collect(path: Path, reader: Reader | None = None) -> dict:
    """Read the whole trace once; the figures as plain data (no formatting).

    READER, if given, is PATH already opened (a partial one ends at a failure:
    ``error`` then names it and the figures count the events before it).
    """
    import time

    import numpy as np

    from goblueprint.trace.events import KIND_OF, EventKind
    from goblueprint.trace.progress import progress
    from goblueprint.trace.reader import open_trace

    size = path.stat().st_size
    start = time.perf_counter()
    if reader is None:
        reader = open_trace(path)
    typs = np.zeros(256, dtype=np.int64)  # events by wire type; folded into kinds at the end
    goroutines, procs, threads = _IdSet(), _IdSet(), _IdSet()
    n = 0
    first = last = None
    with reader, progress(f"reading {path.name}", unit="events", size=size) as advance:
        # Columns per generation: counting is numpy work, no Event object per event.
        for chunk in reader.chunks():
            if not len(chunk):
                continue
            typs += np.bincount(chunk.typ, minlength=256)
            goroutines.add(_transitioned_goroutines(chunk))
            procs.add(chunk.p)
            threads.add(chunk.m)
            if first is None:
                first = int(chunk.ts[0])
            last = int(chunk.ts[-1])
            n += len(chunk)
            advance(n)
    elapsed = time.perf_counter() - start
    kinds = [0] * len(EventKind)
    for typ, count in enumerate(typs.tolist()):
        kinds[KIND_OF[typ]] += count
    syncs = kinds[int(EventKind.SYNC)]
    return {
        "file": str(path),
        "bytes": size,
        "version": f"go 1.{reader.version}",
        "events": n,
        "events_by_kind": {EventKind(k).name: c for k, c in enumerate(kinds) if c},
        # Go's reader emits a Sync at the start of each generation and one at the end.
        "generations": max(syncs - 1, 0),
        "goroutines": len(goroutines),
        "procs": len(procs),
        "threads": len(threads),
        "first_time_ns": first,
        "last_time_ns": last,
        "time_span_ns": last - first if last is not None and first is not None else 0,
        "parse_seconds": round(elapsed, 6),
        "mb_per_s": round(size / 1e6 / elapsed, 3) if elapsed > 0 else None,
        "events_per_s": round(n / elapsed) if elapsed > 0 else None,
        "error": None if reader.error is None else str(reader.error),
    }


def _transitioned_goroutines(chunk):
    """IDs of the goroutines whose state changes in this chunk: Go's summary (and so
    ``go tool trace``'s goroutine list) has one entry per such goroutine.  The
    events' goroutine context is not enough: a goroutine blocked for the whole
    trace, or created and never run, appears only as the subject of a transition."""
    import numpy as np

    from goblueprint.trace import spec

    own_types, arg_types = _g_types()
    typ = chunk.typ
    own = np.isin(typ, own_types)
    named = np.isin(typ, arg_types)
    status = (typ == spec.EV_GO_STATUS) | (typ == spec.EV_GO_STATUS_STACK)
    if status.any():
        # Go skips a GoStatus that restates the known state (old == new, packed in arg 2).
        packed = chunk.args[:, 2]
        named |= status & ((packed >> np.uint64(32)) != (packed & np.uint64(0xFFFFFFFF)))
    return np.concatenate([chunk.g[own], chunk.args[named, 0].view(np.int64)])


@functools.cache
def _g_types() -> tuple:
    """Wire types whose transition is of the event's own goroutine, and of the one in arg 0."""
    import numpy as np

    from goblueprint.trace import spec

    own = ("EV_GO_DESTROY", "EV_GO_DESTROY_SYSCALL", "EV_GO_STOP", "EV_GO_BLOCK",
           "EV_GO_SYSCALL_BEGIN", "EV_GO_SYSCALL_END", "EV_GO_SYSCALL_END_BLOCKED")  # fmt: skip
    arg = ("EV_GO_CREATE", "EV_GO_CREATE_BLOCKED", "EV_GO_CREATE_SYSCALL", "EV_GO_START",
           "EV_GO_UNBLOCK", "EV_GO_SWITCH", "EV_GO_SWITCH_DESTROY")  # fmt: skip
    return tuple(np.array([getattr(spec, n) for n in names], dtype=np.uint8) for names in (own, arg))


class _IdSet:
    """Distinct IDs of int64 columns: a bitmap for the small IDs the runtime hands out,
    a set for the rest (hostile traces), -1 ("none") left out."""

    _DENSE = 1 << 22

    def __init__(self) -> None:
        import numpy as np

        self._seen = np.zeros(1024, dtype=np.bool_)
        self._other: set[int] = set()

    def add(self, col) -> None:
        import numpy as np

        from goblueprint.arrays import unique

        if not len(col):
            return
        lo, hi = int(col.min()), int(col.max())
        if lo < -1 or hi >= self._DENSE:
            big = col[(col < -1) | (col >= self._DENSE)]
            self._other.update(unique(big).tolist())
            col = col[(col >= -1) & (col < self._DENSE)]
            if not len(col):
                return
            hi = int(col.max())
        if hi + 2 > len(self._seen):
            grown = np.zeros(max(2 * len(self._seen), hi + 2), dtype=np.bool_)
            grown[: len(self._seen)] = self._seen
            self._seen = grown
        self._seen[col + 1] = True

    def __len__(self) -> int:
        return int(self._seen[1:].sum()) + len(self._other)


def render_text(stats: dict) -> str:
    span_ms = stats["time_span_ns"] / 1e6
    lines = [
        f"trace        {stats['file']}",
        f"format       {stats['version']} trace",
        f"size         {stats['bytes']} bytes",
        f"events       {stats['events']}",
        f"generations  {stats['generations']}",
        f"time span    {span_ms:.3f} ms ({stats['time_span_ns']} ns)",
        f"goroutines   {stats['goroutines']}",
        f"procs (Ps)   {stats['procs']}",
        f"threads (Ms) {stats['threads']}",
        f"parse        {stats['parse_seconds']:.3f} s, {stats['mb_per_s']} MB/s, {stats['events_per_s']} events/s",
        *([f"incomplete   {stats['error']}"] if stats["error"] else []),
        "",
        "events by kind",
    ]
    width = max((len(k) for k in stats["events_by_kind"]), default=0)
    for kind, count in sorted(stats["events_by_kind"].items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {kind:<{width}}  {count:>10}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import json

    reader = open_input_trace(args.trace)
    stats = collect(Path(args.trace), reader)
    if args.json:
        print(json.dumps(stats, sort_keys=True, indent=2))
    else:
        print(render_text(stats))
    return finish(reader, args, f"the figures count the {stats['events']} events before it")
