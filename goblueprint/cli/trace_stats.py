"""goblueprint trace stats: what a trace holds, and how fast we read it.

Streams the trace once (memory bounded by one generation): events counted as
Go's reader yields them (equal to the ``events=`` of go-reference-parse), by
kind; distinct goroutines, Ps and Ms seen as events' scheduling context;
generations; the time span; file size, parse time and throughput.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from goblueprint.errors import UsageError

HELP = "event counts by kind, goroutines/Ps/Ms, generations, time span, parse speed"

# Progress is refreshed every this many events (a cheap integer comparison per event).
_TICK = 1 << 15


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="Go execution trace (Go 1.22+)")
    parser.add_argument("--json", action="store_true", help="print JSON (sorted keys) instead of a table")


def collect(path: Path) -> dict:
    """Read the whole trace once; the figures as plain data (no formatting)."""
    import time

    from goblueprint.trace.events import KIND_OF, EventKind
    from goblueprint.trace.progress import progress
    from goblueprint.trace.reader import open_trace

    size = path.stat().st_size
    start = time.perf_counter()
    reader = open_trace(path)
    typs = [0] * 256  # events by wire type; folded into kinds at the end
    goroutines: set[int] = set()
    procs: set[int] = set()
    threads: set[int] = set()
    n = 0
    first = last = None
    tick = _TICK
    with reader, progress(f"reading {path.name}", unit="events") as advance:
        events = iter(reader)
        for ev in events:
            first = last = ev
            typs[ev.typ] += 1
            goroutines.add(ev.g)
            procs.add(ev.p)
            threads.add(ev.m)
            n = 1
            break
        # The hot loop reads the Event's slots (g, p, m, typ) that goroutine/proc/thread and
        # kind wrap: the same values without a property call or an enum per event.
        for ev in events:
            typs[ev.typ] += 1
            goroutines.add(ev.g)
            procs.add(ev.p)
            threads.add(ev.m)
            n += 1
            if n >= tick:
                tick += _TICK
                advance(n)
        if n > 1:
            last = ev  # the loop variable outlives the loop: no assignment per event
    elapsed = time.perf_counter() - start
    for ids in (goroutines, procs, threads):
        ids.discard(-1)
    kinds = [0] * len(EventKind)
    for typ, count in enumerate(typs):
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
        "first_time_ns": first.time if first is not None else None,
        "last_time_ns": last.time if last is not None else None,
        "time_span_ns": last.time - first.time if last is not None and first is not None else 0,
        "parse_seconds": round(elapsed, 6),
        "mb_per_s": round(size / 1e6 / elapsed, 3) if elapsed > 0 else None,
        "events_per_s": round(n / elapsed) if elapsed > 0 else None,
    }


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
        "",
        "events by kind",
    ]
    width = max((len(k) for k in stats["events_by_kind"]), default=0)
    for kind, count in sorted(stats["events_by_kind"].items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {kind:<{width}}  {count:>10}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import json

    path = Path(args.trace)
    if not path.is_file():
        raise UsageError(f"{'not a regular file' if path.exists() else 'no such file'}: {args.trace}")
    stats = collect(path)
    if args.json:
        print(json.dumps(stats, sort_keys=True, indent=2))
    else:
        print(render_text(stats))
    return 0
