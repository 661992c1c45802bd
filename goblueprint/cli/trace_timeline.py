"""goblueprint trace timeline: the interactive HTML timeline, or a static SVG Gantt chart of a window."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goblueprint.cli._lab_args import add_lab_argument
from goblueprint.cli._partial import add_trace_argument, finish
from goblueprint.cli._paths import output_file, output_format, writing
from goblueprint.cli._show_capture import add_show_capture_flag
from goblueprint.errors import UsageError

if TYPE_CHECKING:
    from goblueprint.render.timeline_html import Page
    from goblueprint.timeline.model import Timeline

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
    add_trace_argument(parser, "execution trace file (Go 1.22 or newer)")
    parser.add_argument(
        "-o", "--output", required=True, metavar="OUT",
        help="file to write: OUT.html (the interactive timeline) or OUT.svg (a static Gantt chart)",
    )  # fmt: skip
    parser.add_argument("--svg", action="store_true", help="write the SVG Gantt chart (as OUT.svg does)")
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
    add_lab_argument(parser)
    add_show_capture_flag(parser)


FORMATS = {".html": "html", ".htm": "html", ".svg": "svg"}


def load_timeline(
    trace: str | Path,
    kernel: str | None = None,
    *,
    show_capture: bool = False,
    lab: str | None = None,
) -> tuple[Timeline, Any]:
    """The Timeline of the trace file TRACE, and what read it (for ``finish``; a partial
    trace's timeline covers the events before the failure).

    KERNEL: a capture folder recorded with --kernel whose kernel lanes are added (the join
    reads the trace's clock snapshots from TRACE).
    SHOW_CAPTURE keeps goblueprint capture's own goroutines (timeline.capture_marks).
    LAB: a `lab observe` folder whose records are drawn in (goblueprint.lab.views).
    """
    from goblueprint.cli._ingested import trace_timeline

    tl, source = trace_timeline(trace, show_capture=show_capture)
    if kernel is not None:
        from goblueprint.kernel.views import timeline_with_kernel

        tl = timeline_with_kernel(tl, str(trace), kernel)
    if lab is not None:
        from goblueprint.lab.views import timeline_with_lab

        tl = timeline_with_lab(tl, lab)
    return tl, source


def _page(args: argparse.Namespace, title: str) -> tuple[Page, Any]:
    """The HTML page, made and ready to write, and what read the trace.  From the ingested
    tables a few lanes at a time (the Timeline is never held), unless kernel or lab records or
    capture goroutines are drawn in: those join the whole Timeline in memory first."""
    from goblueprint.render.timeline_html import build_page
    from goblueprint.timeline.detail_store import memory_tables

    if args.kernel is None and args.lab is None and not args.show_capture:
        from goblueprint.cli._ingested import ingested_trace
        from goblueprint.render.page_counters import thin_counters
        from goblueprint.timeline.detail_store import ingested_tables

        found = ingested_trace(args.trace)
        # The counters are thinned while the levels are built (on a first run): the one does
        # not wait for the other.
        return build_page(ingested_tables(found, thin_counters), title), found
    tl, reader = load_timeline(args.trace, args.kernel, show_capture=args.show_capture, lab=args.lab)
    with memory_tables(tl) as tables:
        return build_page(tables, title), reader


def run(args: argparse.Namespace) -> int:
    out = output_file(args.output)
    fmt = output_format(
        out, FORMATS, what="a timeline", chosen="svg" if args.svg else None, default="html",
        hints={".png": "no PNG renderer offline: write .svg and convert it, e.g. rsvg-convert"},
    )  # fmt: skip
    title = args.title if args.title is not None else Path(args.trace).name
    if fmt == "svg":
        if args.width < 400:
            raise UsageError("--width must be at least 400")
        t_from = parse_duration(args.t_from)
        t_to = parse_duration(args.t_to) if args.t_to is not None else None
        tl, reader = load_timeline(args.trace, args.kernel, show_capture=args.show_capture, lab=args.lab)
        from goblueprint.render.svg import render_svg

        end = tl.end_ns - tl.start_ns if t_to is None else t_to
        text = render_svg(tl, t_from, end, width=args.width, title=title)
        with writing(out):
            out.write_text(text, encoding="utf-8")
    else:
        if args.t_to is not None or args.t_from != "0":
            raise UsageError(
                "--from/--to select the window of an SVG chart; the HTML timeline holds the whole trace"
            )
        page, reader = _page(args, title)
        # Written a part at a time: the page is never one string (nor its blob one base64 text).
        with writing(out), open(out, "wb") as f:
            page.write(f)
    return finish(reader, args, f"the timeline covers the {reader.events_read} events before it")
