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

import numpy as np
import polars as pl

from goblueprint.errors import PathError
from goblueprint.render.lanes import GROUPS, arrange, counter_lanes, sorted_spans, span_titles
from goblueprint.timeline.export_perfetto import COUNTER_TITLES
from goblueprint.timeline.model import NONE, STATE_NAMES, LaneKind, Timeline


def write_chrome(tl: Timeline, out: str | Path | IO[str]) -> int:
    """Write the Chrome JSON of ``tl`` to a path or text file; returns the number of events."""
    if isinstance(out, (str, Path)):
        try:
            with open(out, "w", encoding="utf-8") as handle:
                return write_chrome(tl, handle)
        except OSError as exc:
            raise PathError.from_os(out, exc, write=True) from None
    dump = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode
    origin = tl.start_ns
    spans = sorted_spans(tl)
    lanes = arrange(tl, spans)
    title_of_span, titles = span_titles(tl, spans, lanes)
    count = 0
    first = True

    pending: list[str] = []

    def emit_text(text: str) -> None:
        nonlocal count, first
        pending.append(text if first else ",\n" + text)
        first = False
        count += 1
        if len(pending) >= 50_000:
            flush()

    def flush() -> None:
        out.write("".join(pending))
        pending.clear()

    def emit(obj: dict) -> None:
        emit_text(dump(obj))

    out.write('{"displayTimeUnit":"ns","otherData":')
    out.write(dump({"generator": "goblueprint", "go_version": tl.go_version, "start_ns": origin}))
    out.write(',"traceEvents":[\n')
    where: dict[tuple[int, int], tuple[int, int]] = {}  # lane -> (pid, tid)
    pid_tid = np.zeros((spans.height, 2), dtype=np.int64)  # sorted-span row -> (pid, tid)
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
            pid_tid[lane.lo : lane.hi] = (pid, tid)
    flush()
    count += _write_complete_events(out, spans, origin, pid_tid, title_of_span, titles, first)
    first = first and spans.height == 0
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
        emit({"ph": "i", "s": "t", "pid": place[0], "tid": place[1], "ts": round((t - origin) / 1000, 3),
              "name": tl.strings[label] or f"event {kind}", "args": args})  # fmt: skip
    pid += 1
    emit({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": "Counters"}})
    # Counters and flows are many: preformatted text with keys in sorted order, as dump() would give.
    titles_json: dict[int, str] = {}
    # A counter named after a P or M lane (the lab's "Proc 3: run queue") goes in that
    # lane's process: Chrome draws counters per process, so it sits with the Ps.
    owner_pid = {
        sid: where[(int(kind), lane_id)][0]
        for sid, (kind, lane_id) in counter_lanes(tl).items()
        if (int(kind), lane_id) in where
    }
    for name, t, value in tl.counters.sort(["name", "time"]).iter_rows():
        title = titles_json.get(name)
        if title is None:
            raw = tl.strings[name]
            title = titles_json[name] = dump(COUNTER_TITLES.get(raw, raw))
        emit_text(
            f'{{"args":{{"value":{dump(float(value))}}},"name":{title},"ph":"C","pid":{owner_pid.get(name, pid)},"tid":0,'
            f'"ts":{(t - origin) / 1000:.3f}}}'
        )
    flows = tl.flows.filter(pl.col("to_time") >= 0).sort(["from_time", "g"])
    for fid, (g, from_g, from_p, from_time, to_time, to_p, label) in enumerate(
        flows.select("g", "from_g", "from_p", "from_time", "to_time", "to_p", "label").iter_rows(), start=1
    ):
        src = where.get((int(LaneKind.G), from_g)) or where.get((int(LaneKind.P), from_p))
        # A flow without a goroutine (the lab's steals) ends on its to_p's P lane.
        dst = where.get((int(LaneKind.P), to_p)) if g == NONE else where.get((int(LaneKind.G), g))
        if src is None or dst is None:
            continue
        name = dump(tl.strings[label] or "wake-up")
        emit_text(
            f'{{"cat":"wakeup","id":{fid},"name":{name},"ph":"s","pid":{src[0]},"tid":{src[1]},'
            f'"ts":{(from_time - origin) / 1000:.3f}}}'
        )
        emit_text(
            f'{{"bp":"e","cat":"wakeup","id":{fid},"name":{name},"ph":"f","pid":{dst[0]},"tid":{dst[1]},'
            f'"ts":{(to_time - origin) / 1000:.3f}}}'
        )
    flush()
    out.write("\n]}\n")
    return count


def _write_complete_events(
    out: IO[str], spans, origin: int, pid_tid, title_of_span, titles, first: bool
) -> int:
    """One "X" event per span, formatted with precomputed pieces (the bulk of the file, so no dicts).

    The text is what json.dumps(sort_keys=True) would give: keys in sorted order.
    """
    name_json = [json.dumps(t, ensure_ascii=True) for t in titles]
    state_json = {code: json.dumps(name) for code, name in STATE_NAMES.items()}
    cols = [
        spans["start"].to_list(),
        spans["end"].to_list(),
        spans["state"].to_list(),
        spans["g"].to_list(),
        spans["p"].to_list(),
        spans["m"].to_list(),
        title_of_span.tolist(),
        pid_tid[:, 0].tolist(),
        pid_tid[:, 1].tolist(),
    ]
    buf: list[str] = []
    sep = "" if first else ",\n"
    for start, end, state, g, p, m, title, pid, tid in zip(*cols, strict=True):
        args = []
        if g >= 0:
            args.append(f'"g":{g}')
        if m >= 0:
            args.append(f'"m":{m}')
        if p >= 0:
            args.append(f'"p":{p}')
        args.append(f'"state":{state_json.get(state) or json.dumps(str(state))}')
        buf.append(
            f'{sep}{{"args":{{{",".join(args)}}},"dur":{(end - start) / 1000:.3f},"name":{name_json[title]},'
            f'"ph":"X","pid":{pid},"tid":{tid},"ts":{(start - origin) / 1000:.3f}}}'
        )
        sep = ",\n"
        if len(buf) >= 50_000:
            out.write("".join(buf))
            buf.clear()
    out.write("".join(buf))
    return len(cols[0])
