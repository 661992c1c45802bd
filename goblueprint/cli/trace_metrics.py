"""goblueprint trace metrics: goroutine analysis, scheduling latency, P utilization, pauses, migrations."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from goblueprint.cli._partial import add_partial_flag, finish, open_input_trace
from goblueprint.cli._show_capture import add_show_capture_flag

HELP = "scheduler metrics: per-goroutine time breakdown, latency, P utilization, STW/GC pauses, migrations"


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
        "--top", type=int, default=20, metavar="N", help="goroutine groups to show (default 20)"
    )
    parser.add_argument(
        "--kernel", metavar="DIR", help="kernel metrics of a capture made with --kernel (docs/kernel.md)"
    )


def run(args: argparse.Namespace) -> int:
    from goblueprint.errors import UsageError
    from goblueprint.timeline import metrics
    from goblueprint.timeline.analysis import analyse

    if args.kernel:
        from goblueprint.kernel.views import run_metrics

        return run_metrics(args)
    if args.trace is None:
        raise UsageError("no TRACE given (it may be left out only with --kernel DIR)")
    reader = open_input_trace(args.trace)
    a = analyse(reader, show_capture=args.show_capture)
    timeline = a.timeline
    if timeline is None:  # analyse() builds it unless told not to
        return 1
    data = metrics.compute(a.summary, timeline, goroutine=args.goroutine)
    if args.json:
        json.dump(data, sys.stdout, sort_keys=True, indent=1)
        sys.stdout.write("\n")
    else:
        _print(data, args.top)
    return finish(reader, args, f"the metrics cover the {reader.events_read} events before it")


def _ms(ns: int) -> str:
    return f"{ns / 1e6:.3f}"


def _print(data: dict[str, Any], top: int) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False)
    # The group table needs ~140 columns; pipes default to 80, which would cut every cell.
    console.width = max(console.width, 150)
    if "goroutine" in data:
        g = data["goroutine"]
        t = Table(title=f"goroutine {g['id']} {escape(g['name'])}", title_justify="left")
        t.add_column("time", no_wrap=True)
        t.add_column("ms", justify="right")
        for key, ns in sorted(g["non_overlapping"].items(), key=lambda kv: (-kv[1], kv[0])):
            t.add_row(escape(key), _ms(ns))
        for key, ns in sorted(g["ranges"].items()):
            t.add_row(escape(f"Range: {key}"), _ms(ns))
        t.add_row("Total", _ms(g["total"]))
        console.print(t)
        return

    tr = data["trace"]
    console.print(f"trace: {_ms(tr['duration_ns'])} ms, {data['goroutines']} goroutines")

    t = Table(title="goroutines by start function (ms)", title_justify="left")
    for col in ("start function", "count", "exec", "exec %", "sched wait", "block", "syscall", "syscall block",
                "GC assist", "sweep", "top block reason"):  # fmt: skip
        t.add_column(col, justify="left" if col in ("start function", "top block reason") else "right")
    for grp in data["groups"][:top]:
        reasons = sorted(grp["block"].items(), key=lambda kv: (-kv[1], kv[0]))
        top_reason = f"{reasons[0][0] or '(none)'} {_ms(reasons[0][1])}" if reasons else ""
        t.add_row(
            escape(grp["name"] or "(inactive, no stack)"), str(grp["count"]), _ms(grp["exec"]),
            f"{100 * grp['exec_share']:.2f}",
            _ms(grp["sched_wait"]), _ms(grp["block_total"]), _ms(grp["syscall"]), _ms(grp["syscall_block"]),
            _ms(grp["gc_assist"]), _ms(grp["sweep"]), escape(top_reason),
        )  # fmt: skip
    if len(data["groups"]) > top:
        t.caption = f"{len(data['groups']) - top} more groups (--top, --json)"
    console.print(t)

    lat = data["sched_latency"]
    t = Table(title="scheduling latency (runnable -> running), µs", title_justify="left")
    for col in ("count", "p50", "p90", "p99", "max"):
        t.add_column(col, justify="right")
    t.add_row(str(lat["count"]), *(f"{lat[k] / 1e3:.1f}" for k in ("p50", "p90", "p99", "max")))
    console.print(t)

    t = Table(title="P utilization", title_justify="left")
    for col in ("P", "running G ms", "running ms", "idle ms", "stopped ms", "utilization"):
        t.add_column(col, justify="right")
    for p in data["procs"]:
        t.add_row(str(p["p"]), _ms(p["running_g"]), _ms(p["running"]), _ms(p["idle"]), _ms(p["stopped"]),
                  f"{100 * p['utilization']:.1f}%")  # fmt: skip
    console.print(t)

    t = Table(title="stop-the-world and GC pauses, µs", title_justify="left")
    for col in ("reason", "count", "total", "max", "p99"):
        t.add_column(col, justify="left" if col == "reason" else "right")
    for row in data["pauses"]:
        t.add_row(escape(row["reason"]), str(row["count"]),
                  *(f"{row[k] / 1e3:.1f}" for k in ("total", "max", "p99")))  # fmt: skip
    console.print(t)

    mig = data["migrations"]
    t = Table(title=f"migrations: {mig['total']} of {mig['starts']} starts", title_justify="left")
    for col in ("P", "in (stolen / global queue)", "out"):
        t.add_column(col, justify="right")
    for row in mig["per_p"]:
        t.add_row(str(row["p"]), str(row["in"]), str(row["out"]))
    console.print(t)
