"""goblueprint trace metrics: goroutine analysis, scheduling latency, P utilization, STW pauses,
GC phases, migrations, minimum mutator utilization, task and region latencies."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from goblueprint.cli._ingested import ingested_trace
from goblueprint.cli._partial import add_partial_flag, finish, open_input_trace, progress_of
from goblueprint.cli._show_capture import add_show_capture_flag

HELP = (
    "scheduler metrics: per-goroutine time breakdown, latency, P utilization, STW pauses, GC phases, "
    "migrations, MMU, task/region latency"
)


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "trace", nargs="?", metavar="TRACE",
        help="execution trace file (Go 1.22 or newer; with --kernel: DIR/trace.out by default)",
    )  # fmt: skip
    add_partial_flag(parser)
    add_show_capture_flag(parser)
    parser.add_argument("--json", action="store_true", help="print JSON (sorted keys, deterministic)")
    parser.add_argument("--goroutine", type=int, metavar="ID", help="only this goroutine's breakdown")
    parser.add_argument(
        "--top",
        type=int,
        metavar="N",
        help="goroutine groups to show (default: 20 in the table, all in --json)",
    )
    parser.add_argument(
        "--mmu-windows", metavar="LIST", default="100us,1ms,10ms,100ms",
        help="windows for the minimum mutator utilization, e.g. 500us,2ms,1s (default %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--mmu-flags", metavar="LIST", default="stw,background,assist",
        help="GC work that counts against the mutator, as go tool trace's MMU page: any of stw, "
        "background, assist, sweep, and perproc for one utilization function per P "
        "(default %(default)s, that page's default)",
    )  # fmt: skip
    parser.add_argument(
        "--kernel", metavar="DIR", help="kernel metrics of a capture made with --kernel (docs/kernel.md)"
    )


def run(args: argparse.Namespace) -> int:
    from goblueprint.errors import UsageError
    from goblueprint.timeline import metrics, mmu

    if args.top is not None and args.top < 0:
        raise UsageError("--top must be 0 or more")
    if args.kernel:
        from goblueprint.kernel.views import run_metrics

        return run_metrics(args)
    if args.trace is None:
        raise UsageError("no TRACE given (it may be left out only with --kernel DIR)")
    flags = mmu.parse_flags(args.mmu_flags)
    windows = mmu.parse_windows(args.mmu_windows)
    mmu_flags = None if args.goroutine is not None else flags
    # The ingested tables hold the default MMU flags' utilization and leave out capture's goroutines.
    if not args.show_capture and mmu_flags in (None, mmu.DEFAULT_FLAGS):
        found = ingested_trace(args.trace)
        summary, source = found.summary(), found
        timeline = found.timeline_scans()
        utilization = None if mmu_flags is None else found.utilization(mmu_flags)
    else:
        # Capture's own goroutines, or other MMU flags: a pass of its own.
        from goblueprint.timeline.analysis import analyse

        reader = open_input_trace(args.trace)
        with progress_of(args.trace, "analysing") as advance:
            a = analyse(reader, show_capture=args.show_capture, mmu_flags=mmu_flags, progress=advance)
        if a.timeline is None:  # analyse() builds it unless told not to
            return 1
        summary, timeline, utilization, source = a.summary, a.timeline, a.utilization, reader
    data = metrics.compute(
        summary,
        timeline,
        goroutine=args.goroutine,
        utilization=utilization,
        mmu_flags=flags,
        mmu_windows=windows,
    )
    if "groups" in data:  # groups_total still counts them all
        top = args.top if args.top is not None else (None if args.json else 20)
        if top is not None:
            data["groups"] = data["groups"][:top]
    if args.json:
        json.dump(data, sys.stdout, sort_keys=True, indent=1)
        sys.stdout.write("\n")
    else:
        _print(data)
    return finish(source, args, f"the metrics cover the {source.events_read} events before it")


def _ms(ns: int) -> str:
    return f"{ns / 1e6:.3f}"


def _us(ns: int | None) -> str:
    return "-" if ns is None else f"{ns / 1e3:.1f}"


def _window(ns: int) -> str:
    for unit, size in (("s", 1_000_000_000), ("ms", 1_000_000), ("µs", 1_000)):
        if ns >= size:
            return f"{ns / size:g}{unit}"
    return f"{ns}ns"


_GROUP_COLUMNS = ("start function", "count", "exec", "exec %", "sched wait", "block", "syscall", "syscall block",
                  "GC assist", "sweep", "top block reason")  # fmt: skip
_GROUP_DROP_ORDER = (
    "top block reason",
    "syscall block",
    "sweep",
    "GC assist",
    "syscall",
    "exec %",
    "sched wait",
)
_NAME_MIN = 16  # a name column wraps but keeps at least this many columns


def _table_width(cols: list[str], rows: list[dict[str, str]]) -> int:
    """Columns a rich table of these cells needs, names wrapped down to _NAME_MIN."""
    width = 1
    for c in cols:
        cell = max([len(c), *(len(r[c]) for r in rows)])
        if c in ("start function", "top block reason"):
            cell = min(cell, max(_NAME_MIN, len(c)))
        width += cell + 3
    return width


def _print(data: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from goblueprint.cli._console import table_console

    console = table_console()

    def table(title: str, *cols: str, left: tuple[str, ...] = ()) -> Table:
        # The title is a line of its own: as a Table title it would wrap to the table's width.
        console.print(title)
        t = Table()
        # On a terminal narrower than a table, names wrap inside their cells (keeping at
        # least _NAME_MIN columns); numbers never do.
        for col in cols:
            if col in left:
                t.add_column(col, justify="left", overflow="fold", min_width=min(_NAME_MIN, len(col)))
            else:
                t.add_column(col, justify="right", no_wrap=True)
        return t

    if "goroutine" in data:
        g = data["goroutine"]
        t = table(escape(f"goroutine {g['id']} {g['name']}"), "time", "ms", left=("time",))
        for key, ns in sorted(g["non_overlapping"].items(), key=lambda kv: (-kv[1], kv[0])):
            t.add_row(escape(key), _ms(ns))
        for key, ns in sorted(g["ranges"].items()):
            t.add_row(escape(f"Range: {key}"), _ms(ns))
        t.add_row("Total", _ms(g["total"]))
        console.print(t)
        return

    tr = data["trace"]
    console.print(f"trace: {_ms(tr['duration_ns'])} ms, {data['goroutines']} goroutines")

    rows = []
    for grp in data["groups"]:
        reasons = sorted(grp["block"].items(), key=lambda kv: (-kv[1], kv[0]))
        top_reason = f"{reasons[0][0] or '(none)'} {_ms(reasons[0][1])}" if reasons else ""
        rows.append({
            "start function": escape(grp["name"] or "(inactive, no stack)"), "count": str(grp["count"]),
            "exec": _ms(grp["exec"]), "exec %": f"{100 * grp['exec_share']:.2f}", "sched wait": _ms(grp["sched_wait"]),
            "block": _ms(grp["block_total"]), "syscall": _ms(grp["syscall"]),
            "syscall block": _ms(grp["syscall_block"]), "GC assist": _ms(grp["gc_assist"]), "sweep": _ms(grp["sweep"]),
            "top block reason": escape(top_reason),
        })  # fmt: skip
    cols = list(_GROUP_COLUMNS)
    dropped = []
    if console.is_terminal:
        # A terminal too narrow for every column loses the least telling ones, whole,
        # rather than have each cell squeezed until numbers break.
        for col in _GROUP_DROP_ORDER:
            if _table_width(cols, rows) <= console.width:
                break
            cols.remove(col)
            dropped.append(col)
    t = table("goroutines by start function (ms)", *cols, left=("start function", "top block reason"))
    for row in rows:
        t.add_row(*(row[c] for c in cols))
    hidden = data.get("groups_total", len(data["groups"])) - len(data["groups"])
    notes = [f"{hidden} more groups (--top N)"] if hidden > 0 else []
    if dropped:
        notes.append(f"too narrow for: {', '.join(dropped)} (--json, or a wider terminal)")
    t.caption = "; ".join(notes) or None
    console.print(t)

    lat = data["sched_latency"]
    t = table("scheduling latency (runnable -> running), µs", "count", "p50", "p90", "p99", "max")
    t.add_row(str(lat["count"]), *(_us(lat[k]) for k in ("p50", "p90", "p99", "max")))
    console.print(t)

    t = table("P utilization", "P", "running G ms", "running ms", "idle ms", "stopped ms", "utilization")
    for p in data["procs"]:
        t.add_row(str(p["p"]), _ms(p["running_g"]), _ms(p["running"]), _ms(p["idle"]), _ms(p["stopped"]),
                  f"{100 * p['utilization']:.1f}%")  # fmt: skip
    console.print(t)

    t = table("stop-the-world pauses, µs", "reason", "count", "total", "p50", "p99", "max", left=("reason",))
    for row in data["pauses"]:
        t.add_row(
            escape(row["reason"]), str(row["count"]), *(_us(row[k]) for k in ("total", "p50", "p99", "max"))
        )
    console.print(t)

    t = table("GC phases (concurrent: the program keeps running), µs", "phase", "count", "total", "p50", "p99",
              "max", left=("phase",))  # fmt: skip
    for row in data.get("gc_phases", []):
        t.add_row(
            escape(row["phase"]), str(row["count"]), *(_us(row[k]) for k in ("total", "p50", "p99", "max"))
        )
    console.print(t)

    mig = data["migrations"]
    t = table(
        f"migrations: {mig['total']} of {mig['starts']} starts", "P", "in (stolen / global queue)", "out"
    )
    for row in mig["per_p"]:
        t.add_row(str(row["p"]), str(row["in"]), str(row["out"]))
    console.print(t)

    if "mmu" in data:
        m = data["mmu"]
        t = table(f"minimum mutator utilization ({', '.join(m['flags']) or 'no GC work counted'})", "window",
                  "MMU")  # fmt: skip
        for row in m["windows"]:
            t.add_row(_window(row["window_ns"]), f"{100 * row['mmu']:.2f}%")
        console.print(t)
        if m["curve"]:
            first, last = m["curve"][0]["window_ns"], m["curve"][-1]["window_ns"]
            console.print(
                f"(other windows: --mmu-windows; --json has Go's MMU curve, {_window(first)} to {_window(last)})"
            )

    for key, title in (
        ("tasks", "tasks by type: durations of the tasks begun and ended in the trace, µs"),
        (
            "regions",
            "regions by type: durations (a region open at the trace's start or end from or to it), µs",
        ),
    ):
        rows = data.get(key, [])
        if not rows:
            continue
        t = table(title, "type", "count", "complete", "p50", "p90", "p99",
                  "max", left=("type",))  # fmt: skip
        for row in rows:
            t.add_row(escape(row["type"] or "(none)"), str(row["count"]), str(row["complete"]),
                      *(_us(row[k]) for k in ("p50", "p90", "p99", "max")))  # fmt: skip
        console.print(t)
