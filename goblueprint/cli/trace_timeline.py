"""goblueprint trace timeline: the interactive HTML timeline, or a static SVG Gantt chart of a window."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from goblueprint.errors import UsageError

HELP = "write a self-contained offline HTML timeline of a trace (or an SVG Gantt chart with --svg)"

_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*(ns|us|µs|ms|s)?\s*$")
_UNITS = {None: 1, "ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def parse_duration(text: str) -> int:
    """'1.5ms' -> 1500000 ns; a bare number is nanoseconds."""
    m = _DURATION.match(text)
    if not m:
        raise UsageError(f"bad time {text!r}: expected a number with an optional unit ns, us, ms or s")
    return round(float(m.group(1)) * _UNITS[m.group(2)])


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="execution trace file (Go 1.22 or newer)")
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="file to write (.html, or .svg)")
    parser.add_argument("--svg", action="store_true", help="write a static SVG Gantt chart of a window")
    parser.add_argument(
        "--from", dest="t_from", default="0", metavar="T", help="window start since trace start (e.g. 2ms)"
    )
    parser.add_argument(
        "--to", dest="t_to", default=None, metavar="T", help="window end (default: trace end)"
    )
    parser.add_argument(
        "--title", default=None, help="title shown in the page (default: the trace file name)"
    )
    parser.add_argument("--width", type=int, default=1200, help="SVG width in pixels (default 1200)")
    parser.add_argument(
        "--kernel", metavar="DIR", help="add the kernel lanes of a capture made with --kernel"
    )


def load_timeline(path: str, kernel: str | None = None):
    """The Timeline of a trace file; a missing or unreadable file is a one-line error.

    KERNEL: a capture folder recorded with --kernel, whose kernel lanes are added.
    """
    from goblueprint.timeline.model import build_timeline

    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{path}: no such trace file")
    try:
        tl = build_timeline(p)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if kernel is not None:
        from goblueprint.kernel.views import timeline_with_kernel

        tl = timeline_with_kernel(tl, path, kernel)
    return tl


def write_text(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc


def run(args: argparse.Namespace) -> int:
    title = args.title if args.title is not None else Path(args.trace).name
    if args.svg:
        if args.width < 400:
            raise UsageError("--width must be at least 400")
        t_from = parse_duration(args.t_from)
        t_to = parse_duration(args.t_to) if args.t_to is not None else None
        tl = load_timeline(args.trace, args.kernel)
        from goblueprint.render.svg import render_svg

        end = tl.end_ns - tl.start_ns if t_to is None else t_to
        write_text(args.output, render_svg(tl, t_from, end, width=args.width, title=title))
        return 0
    if args.t_to is not None or args.t_from != "0":
        raise UsageError(
            "--from/--to select the window of an --svg chart; the HTML timeline holds the whole trace"
        )
    tl = load_timeline(args.trace, args.kernel)
    from goblueprint.render.timeline_html import render_timeline_html

    write_text(args.output, render_timeline_html(tl, title))
    return 0
