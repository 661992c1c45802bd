"""Export a Timeline as Chrome's Trace Event JSON (Catapult ``traceEvents``).

One "process" per display group (Procs, Threads, Goroutines, GC...), one "thread"
per lane, named with metadata events; spans are complete events ("X"), instants
"i", counters "C" and wake-ups flow events ("s" on the waker's thread, "f" with
binding point "e" on the woken goroutine's thread).  Times are microseconds
since the start of the trace, with nanosecond fractions kept.

The file is streamed one event per line; every object is dumped with sorted keys,
so the same timeline always gives the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

import polars as pl

from goblueprint.errors import UsageError
from goblueprint.render.lanes import GROUPS, arrange, sorted_spans, span_titles
from goblueprint.timeline.export_perfetto import COUNTER_TITLES
from goblueprint.timeline.model import STATE_NAMES, LaneKind, Timeline


def _us(ns: int) -> float:
    return round(ns / 1000.0, 3)


def write_chrome(tl: Timeline, out: str | Path | IO[str]) -> int:
    """Write the Chrome JSON of ``tl`` to a path or text file; returns the number of events."""
    if isinstance(out, (str, Path)):
        try:
            with open(out, "w", encoding="utf-8") as handle:
                return write_chrome(tl, handle)
        except OSError as exc:
            raise UsageError(f"cannot write {out}: {exc.strerror}") from exc
    dump = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode
    origin = tl.start_ns
    spans = sorted_spans(tl)
    lanes = arrange(tl, spans)
    title_of_span, titles = span_titles(tl, spans, lanes)
    count = 0
    first = True

    def emit(obj: dict) -> None:
        nonlocal count, first
        out.write(("" if first else ",\n") + dump(obj))
        first = False
        count += 1

    out.write('{"displayTimeUnit":"ns","otherData":')
    out.write(dump({"generator": "goblueprint", "go_version": tl.go_version, "start_ns": origin}))
    out.write(',"traceEvents":[\n')
    where: dict[tuple[int, int], tuple[int, int]] = {}  # lane -> (pid, tid)
    pid = 0
    for key, title, _kinds, _folded in GROUPS:
        members = [lane for lane in lanes if lane.group == key]
        if not members:
            continue
        pid += 1
        emit({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": title}})
        emit({"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index", "args": {"sort_index": pid}})
        for tid, lane in enumerate(members, start=1):
            where[(int(lane.kind), lane.lane_id)] = (pid, tid)
            emit({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": lane.name}})
            emit(
                {"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}}
            )
            rows = spans.slice(lane.lo, lane.hi - lane.lo)
            for k, (start, end, state, g, p, m) in enumerate(
                rows.select("start", "end", "state", "g", "p", "m").iter_rows()
            ):
                args = {"state": STATE_NAMES.get(state, str(state))}
                for name, value in (("g", g), ("p", p), ("m", m)):
                    if value >= 0:
                        args[name] = value
                emit({"ph": "X", "pid": pid, "tid": tid, "ts": _us(start - origin), "dur": _us(end - start),
                      "name": titles[int(title_of_span[lane.lo + k])], "args": args})  # fmt: skip
    for kind, t, g, p, m, label, category in tl.instants.select(
        "kind", "time", "g", "p", "m", "label", "category"
    ).iter_rows():
        place = (
            where.get((int(LaneKind.G), g))
            or where.get((int(LaneKind.P), p))
            or where.get((int(LaneKind.M), m))
        )
        if place is None:
            continue
        args = {"category": tl.strings[category]} if category else {}
        emit({"ph": "i", "s": "t", "pid": place[0], "tid": place[1], "ts": _us(t - origin),
              "name": tl.strings[label] or f"event {kind}", "args": args})  # fmt: skip
    pid += 1
    emit({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": "Counters"}})
    for name, t, value in tl.counters.sort(["name", "time"]).iter_rows():
        raw = tl.strings[name]
        emit({"ph": "C", "pid": pid, "tid": 0, "ts": _us(t - origin), "name": COUNTER_TITLES.get(raw, raw),
              "args": {"value": value}})  # fmt: skip
    flows = tl.flows.filter(pl.col("to_time") >= 0).sort(["from_time", "g"])
    for fid, (g, from_g, from_p, from_time, to_time, label) in enumerate(
        flows.select("g", "from_g", "from_p", "from_time", "to_time", "label").iter_rows(), start=1
    ):
        src = where.get((int(LaneKind.G), from_g)) or where.get((int(LaneKind.P), from_p))
        dst = where.get((int(LaneKind.G), g))
        if src is None or dst is None:
            continue
        name = tl.strings[label] or "wake-up"
        emit({"ph": "s", "id": fid, "pid": src[0], "tid": src[1], "ts": _us(from_time - origin),
              "name": name, "cat": "wakeup"})  # fmt: skip
        emit({"ph": "f", "bp": "e", "id": fid, "pid": dst[0], "tid": dst[1], "ts": _us(to_time - origin),
              "name": name, "cat": "wakeup"})  # fmt: skip
    out.write("\n]}\n")
    return count
