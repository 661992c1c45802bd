"""The forms of a batch's answer: terminal tables, deterministic JSON, one offline HTML page.

Only formatting: the numbers come from ``fleet.metrics`` (or the user's query) unchanged.
The HTML page carries everything inline (CSS, SVG plots), so it opens offline and can be
mailed as one file; each plot is a strip of one dot per trace, its title the trace's name.
"""

from __future__ import annotations

import html
import json
from typing import Any

from goblueprint.render.svg import format_ns


def dumps(data: Any) -> str:
    """JSON with a fixed form: the same data prints the same bytes."""
    return json.dumps(data, indent=1, sort_keys=True, default=str) + "\n"


def rows_json(rows: list[dict[str, Any]], failures: list[dict[str, Any]]) -> str:
    # Row keys stay in the query's column order (sort_keys would lose it); the rest is sorted.
    body = json.dumps(rows, indent=1, default=str)
    return f'{{"failures": {dumps(failures).rstrip()},\n"rows": {body}}}\n'


def _us(ns: int | None) -> str:
    return "-" if ns is None else f"{ns / 1e3:.1f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def print_rows(columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from goblueprint.cli._console import table_console

    table = Table(caption=f"{len(rows)} rows")
    for i, col in enumerate(columns):
        values = [row[i] for row in rows if row[i] is not None]
        numeric = bool(values) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        # Numbers right-aligned and never wrapped; text wraps in its cell on a narrow terminal.
        if numeric:
            table.add_column(escape(col), justify="right", no_wrap=True)
        else:
            table.add_column(escape(col), overflow="fold")
    for row in rows:
        table.add_row(*(escape("" if v is None else str(v)) for v in row))
    table_console().print(table)


def print_metrics(report: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from goblueprint.cli._console import table_console

    console = table_console()

    def table(title: str, *cols: str, left: tuple[str, ...] = ()) -> Table:
        console.print(title)
        t = Table()
        for col in cols:
            t.add_column(col, justify="left" if col in left else "right", overflow="fold")
        return t

    t = table("traces (times in µs)", "trace", "go", "ms", "events", "goroutines", "Ps", "P util",
              "STW", "STW max", "latency p50", "p99", "max", left=("trace", "go"))  # fmt: skip
    for r in report["traces"]:
        t.add_row(
            escape(r["trace"]), r["go_version"], f"{r['duration_ns'] / 1e6:.3f}", str(r["events"]),
            str(r["goroutines"]), str(r["procs"]), _pct(r["utilization"]), str(r["stw_count"]),
            _us(r["stw_max"]), _us(r["latency_p50"]), _us(r["latency_p99"]), _us(r["latency_max"]),
        )  # fmt: skip
    console.print(t)
    if "all" not in report:
        return
    a = report["all"]
    console.print(
        f"all {a['traces']} traces: {a['events']} events, {a['goroutines']} goroutines, "
        f"{a['stw_count']} STW pauses ({_us(a['stw_total'])} µs), mean P utilization {_pct(a['utilization'])}"
    )
    t = table("stop-the-world pauses by reason, all traces (µs)", "reason", "traces", "count", "total",
              "p50", "p99", "max", left=("reason",))  # fmt: skip
    for r in report["pauses"]["by_reason"]:
        t.add_row(escape(r["reason"]), str(r["traces"]), str(r["count"]),
                  *(_us(r[k]) for k in ("total", "p50", "p99", "max")))  # fmt: skip
    console.print(t)
    t = table("worst pauses", "trace", "reason", "at ms", "µs", left=("trace", "reason"))
    for r in report["pauses"]["worst"]:
        t.add_row(escape(r["trace"]), escape(r["reason"]), f"{r['at_ns'] / 1e6:.3f}", _us(r["duration_ns"]))
    console.print(t)
    t = table("scheduling latency by start function, all traces (µs)", "start function", "traces",
              "count", "p50", "p90", "p99", "max", left=("start function",))  # fmt: skip
    for r in report["sched_latency"]["by_function"]:
        t.add_row(escape(r["function"] or "(no stack)"), str(r["traces"]), str(r["count"]),
                  *(_us(r[k]) for k in ("p50", "p90", "p99", "max")))  # fmt: skip
    console.print(t)


# -- HTML ---------------------------------------------------------------------------------

_CSS = """
body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.fail{color:#b00}.plots{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0}figcaption{font-size:12px;color:#555}
"""


def _e(text: Any) -> str:
    return html.escape("" if text is None else str(text))


def _table(cols: list[tuple[str, str, bool]], rows: list[dict[str, Any]], fmt: dict[str, Any]) -> str:
    """COLS: (key, heading, numeric); FMT: key -> formatter of its values."""
    head = "".join(f'<th class="{"n" if num else ""}">{_e(h)}</th>' for _, h, num in cols)
    body = []
    for r in rows:
        cells = "".join(
            f'<td class="{"n" if num else ""}">{_e(fmt.get(k, str)(r[k]))}</td>' for k, _, num in cols
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def strip_svg(
    title: str, points: list[tuple[str, float]], unit: str, *, width: int = 360, top: float | None = None
) -> str:
    """One dot per trace on a horizontal axis from 0 to TOP (default: the largest value);
    hovering a dot names its trace and value."""
    height, pad = 70, 12
    top = top or max((v for _, v in points), default=0.0) or 1.0
    dots = []
    for i, (name, v) in enumerate(points):
        x = pad + (width - 2 * pad) * v / top
        y = 22 + (i * 7) % 24  # spread ties vertically so each dot stays visible
        dots.append(
            f'<circle cx="{x:.1f}" cy="{y}" r="3.5" fill="#3366cc" fill-opacity="0.6">'
            f"<title>{_e(name)}: {v:.6g} {_e(unit)}</title></circle>"
        )
    axis = (
        f'<line x1="{pad}" y1="52" x2="{width - pad}" y2="52" stroke="#888"/>'
        f'<text x="{pad}" y="66" font-size="10">0</text>'
        f'<text x="{width - pad}" y="66" font-size="10" text-anchor="end">{top:.6g} {_e(unit)}</text>'
    )
    return (
        f'<figure><svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{_e(title)}">{axis}{"".join(dots)}</svg>'
        f"<figcaption>{_e(title)} ({len(points)} traces)</figcaption></figure>"
    )


def metrics_html(report: dict[str, Any], title: str = "goblueprint trace batch") -> str:
    traces = report["traces"]
    parts = [f"<h1>{_e(title)}</h1>"]
    if "all" in report:
        a = report["all"]
        parts.append(
            f"<p>{a['traces']} traces, {a['events']} events, {a['goroutines']} goroutines, "
            f"{a['stw_count']} stop-the-world pauses ({_e(format_ns(a['stw_total']))}), "
            f"mean P utilization {_e(_pct(a['utilization']))}; {len(report['failures'])} failed.</p>"
        )

        def pts(key: str, scale: float) -> list[tuple[str, float]]:
            return [(t["trace"], t[key] / scale) for t in traces if t[key] is not None]

        parts.append('<h2>Across traces</h2><div class="plots">')
        parts.append(strip_svg("worst STW pause per trace", pts("stw_max", 1e3), "µs"))
        parts.append(strip_svg("scheduling latency p99 per trace", pts("latency_p99", 1e3), "µs"))
        parts.append(strip_svg("mean P utilization per trace", pts("utilization", 0.01), "%", top=100))
        parts.append(strip_svg("goroutines per trace", pts("goroutines", 1), ""))
        parts.append("</div>")
        parts.append("<h2>Worst traces</h2>")
        for key, heading, fmt in (
            ("stw_max", "worst STW pause (µs)", _us),
            ("latency_p99", "scheduling latency p99 (µs)", _us),
            ("utilization", "lowest mean P utilization", _pct),
        ):
            rows = a["worst"][key]
            parts.append(f"<h3>{_e(heading)}</h3>")
            parts.append(_table([("trace", "trace", False), (key, heading, True)], rows, {key: fmt}))
        parts.append("<h2>Stop-the-world pauses by reason (µs)</h2>")
        parts.append(
            _table(
                [("reason", "reason", False), ("traces", "traces", True), ("count", "count", True),
                 ("total", "total", True), ("p50", "p50", True), ("p99", "p99", True), ("max", "max", True)],
                report["pauses"]["by_reason"], dict.fromkeys(("total", "p50", "p99", "max"), _us),
            )
        )  # fmt: skip
        parts.append("<h2>Worst pauses</h2>")
        parts.append(
            _table(
                [("trace", "trace", False), ("reason", "reason", False), ("at_ns", "at (ms)", True),
                 ("duration_ns", "µs", True)],
                report["pauses"]["worst"], {"at_ns": lambda v: f"{v / 1e6:.3f}", "duration_ns": _us},
            )
        )  # fmt: skip
        parts.append("<h2>Scheduling latency by start function (µs)</h2>")
        parts.append(
            _table(
                [("function", "start function", False), ("traces", "traces", True), ("count", "count", True),
                 ("p50", "p50", True), ("p90", "p90", True), ("p99", "p99", True), ("max", "max", True)],
                report["sched_latency"]["by_function"], dict.fromkeys(("p50", "p90", "p99", "max"), _us),
            )
        )  # fmt: skip
    parts.append("<h2>Traces</h2>")
    parts.append(
        _table(
            [("trace", "trace", False), ("go_version", "go", False), ("events", "events", True),
             ("goroutines", "goroutines", True), ("procs", "Ps", True), ("utilization", "P util", True),
             ("stw_count", "STW", True), ("stw_max", "STW max µs", True), ("latency_p50", "latency p50 µs", True),
             ("latency_p99", "p99 µs", True)],
            traces, {"utilization": _pct, "stw_max": _us, "latency_p50": _us, "latency_p99": _us},
        )
    )  # fmt: skip
    if report["failures"]:
        parts.append('<h2 class="fail">Failures</h2>')
        parts.append(
            _table(
                [("trace", "trace", False), ("error", "error", False), ("offset", "offset", True)],
                report["failures"], {"offset": lambda v: "-" if v is None else str(v)},
            )
        )  # fmt: skip
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{_CSS}</style></head><body>{''.join(parts)}</body></html>\n"
    )
