"""The kernel recording in the trace commands: ``--kernel DIR`` of trace timeline/export/sql/metrics.

Each command keeps its own code; these functions are what it calls when
``--kernel`` is given, so the kernel layer stays in this package.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import polars as pl

from goblueprint.timeline.model import Timeline

KERNEL_HELP = "a capture folder recorded with --kernel: add its kernel lanes / tables (see docs/kernel.md)"


def add_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernel", metavar="DIR", help=KERNEL_HELP)


def trace_of(trace: str | None, directory: str) -> str:
    """TRACE if given, else DIR/trace.out."""
    from goblueprint.cli._paths import input_file

    return str(input_file(trace if trace else Path(directory) / "trace.out"))


def timeline_with_kernel(tl: Timeline, trace: str, directory: str) -> Timeline:
    from goblueprint.kernel.join import kernel_timeline

    return kernel_timeline(tl, trace, directory)[0]


def sql_tables(trace: str, directory: str) -> dict[str, pl.DataFrame]:
    """The trace's timeline tables with the kernel lanes in them, and the kernel's own tables.

    kernel_intervals (per-thread intervals on the trace clock, with state names and the G
    the trace says ran), kernel_marks, kernel_threads, kernel_events (decoded perf events,
    CLOCK_MONOTONIC ``time`` and ``trace_time``).
    """
    from goblueprint.kernel import join, metrics
    from goblueprint.kernel.intervals import KSTATE_NAMES
    from goblueprint.timeline.model import build_timeline
    from goblueprint.timeline.tables import timeline_tables

    tl = build_timeline(Path(trace))
    kernel_tl, joined = join.kernel_timeline(tl, trace, directory)
    names = {int(k): v for k, v in KSTATE_NAMES.items()}
    out = {k: v for k, v in timeline_tables(kernel_tl).items() if k in ("intervals", "lanes", "states")}
    out["kernel_intervals"] = joined.intervals.with_columns(
        pl.col("state").replace_strict(names, return_dtype=pl.String).alias("state_name")
    )
    marks = join.preemption_marks(joined)
    out["kernel_marks"] = marks.with_columns(
        pl.col("kstate").replace_strict(names, return_dtype=pl.String).alias("kstate_name")
    )
    out["kernel_threads"] = metrics.thread_table(joined)
    out["kernel_events"] = joined.kernel.events.with_columns(
        (pl.col("time") - joined.clock.offset_ns).alias("trace_time")
    )
    return out


def write_kernel_parquet(trace: str, directory: str, out_dir: str) -> list[Path]:
    """Next to ``trace export --format parquet``'s files: the kernel tables, and intervals/lanes with kernel lanes."""
    from goblueprint.timeline.tables import write_frames

    return write_frames(sql_tables(trace, directory), out_dir)


def run_metrics(args: argparse.Namespace) -> int:
    """``trace metrics --kernel DIR [TRACE]``: the kernel document, with the trace's metrics under "go"."""
    from goblueprint.cli._partial import finish, open_input_trace
    from goblueprint.kernel import join, metrics
    from goblueprint.timeline import metrics as go_metrics
    from goblueprint.timeline.analysis import analyse

    kernel = join.load(args.kernel)  # first: a folder without a kernel recording is the likelier mistake
    trace = trace_of(args.trace, args.kernel)
    reader = open_input_trace(trace)
    a = analyse(reader)
    tl = a.timeline
    if tl is None:
        return 1
    joined = join.join(tl, kernel, join.trace_clock(trace))
    data = metrics.compute(joined, tl)
    if args.json:
        data["go"] = go_metrics.compute(a.summary, tl, goroutine=args.goroutine)
        json.dump(data, sys.stdout, sort_keys=True, indent=1)
        sys.stdout.write("\n")
    else:
        _print(data, 20 if args.top is None else args.top)  # --top's default is the table's 20
    return finish(reader, args, f"the metrics cover the {reader.events_read} events before it")


def _short(frame: str) -> str:
    """'func /long/path/to/file.go:12' as 'func file.go:12' for the terminal (JSON keeps the path)."""
    func, _, where = frame.rpartition(" ")
    return f"{func} {where.rsplit('/', 1)[-1]}" if func else frame


def _ms(ns: int) -> str:
    return f"{ns / 1e6:.3f}"


def _print(data: dict[str, Any], top: int) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False)
    console.width = max(console.width, 150)
    c = data["clock"]
    console.print(
        f"kernel: pid {data['pid']}, {data['matched_threads']} of {data['trace_threads']} trace Ms seen by perf; "
        f"clock offset {c['offset_ns']} ns ({c['source']}, spread {c['spread_ns']} ns)"
    )
    console.print(
        f"OS preemptions under a running G: {data['os_preemptions_under_running_g']}; runnable in the kernel "
        f"while running in Go: {_ms(data['runnable_in_kernel_while_running_ns'])} ms; waiting for a CPU "
        f"holding a P: {_ms(data['wait_for_cpu_with_p_ns'])} ms"
    )
    t = Table(title="threads (M): kernel view, ms", title_justify="left")
    cols = ("M", "invol.", "vol.", "migr.", "on CPU", "off CPU", "preempted", "woken wait", "sleeping", "disk",
            "runnable under G", "OS preempt. under G")  # fmt: skip
    for col in cols:
        t.add_column(col, justify="right")
    for r in data["threads"]:
        t.add_row(
            str(r["m"]), str(r["involuntary_switches"]), str(r["voluntary_switches"]), str(r["cpu_migrations"]),
            _ms(r["on_cpu_ns"]), _ms(r["off_cpu_ns"]), _ms(r["off_preempted_ns"]),
            _ms(r["off_woken_waiting_cpu_ns"]), _ms(r["off_sleeping_ns"]), _ms(r["off_disk_ns"]),
            _ms(r["runnable_in_kernel_while_running_ns"]), str(r["os_preemptions_under_running_g"]),
        )  # fmt: skip
    console.print(t)
    t = Table(title="goroutines: kernel view while running, ms", title_justify="left")
    for col in ("G", "OS preemptions", "runnable in kernel", "off CPU", "on CPU", "threads", "migrations"):
        t.add_column(col, justify="right")
    rows = sorted(data["goroutines"], key=lambda r: (-r["runnable_in_kernel_while_running_ns"], r["g"]))
    for r in rows[:top]:
        t.add_row(
            str(r["g"]), str(r["os_preemptions"]), _ms(r["runnable_in_kernel_while_running_ns"]),
            _ms(r["off_cpu_while_running_ns"]), _ms(r["on_cpu_while_running_ns"]), str(r["threads"]),
            str(r["cpu_migrations"]),
        )  # fmt: skip
    console.print(t)
    locks = data["locks"]
    if locks is None:
        console.print("futex/lock waits: not recorded (capture with --locks)")
        return
    t = Table(
        title=f"futex waits: {locks['futex_waits']}, {_ms(locks['futex_wait_ns'])} ms", title_justify="left"
    )
    for col in ("waits", "ms", "threads", "where", "goroutines", "stack (leaf first)"):
        t.add_column(col, justify="left" if col in ("where", "stack (leaf first)") else "right")
    for s in locks["futex_hot_spots"]:
        t.add_row(
            str(s["waits"]), _ms(s["wait_ns"]), str(s["threads"]), s["m_state"],
            " ".join(str(g) for g in s["goroutines"]), escape("\n".join(_short(f) for f in s["stack"][:6]) or "-"),
        )  # fmt: skip
    console.print(t)
