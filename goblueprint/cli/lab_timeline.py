"""goblueprint lab timeline: the run's trace timeline with the lab records drawn in."""

from __future__ import annotations

import argparse

HELP = "HTML timeline of a lab run: the trace plus run-queue counters, steal arrows and sysmon marks"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="a `lab observe` output folder")
    parser.add_argument("-o", "--output", required=True, metavar="OUT.html")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from goblueprint.cli._lab_common import load_frame
    from goblueprint.cli.trace_timeline import load_timeline, write_text
    from goblueprint.errors import LabError
    from goblueprint.lab.timeline import with_records
    from goblueprint.render.timeline_html import render_timeline_html

    _table, records = load_frame(args.dir)
    trace = Path(args.dir) / "trace.out"
    if not trace.exists():
        raise LabError(f"{args.dir}: no trace.out to draw the records on")
    tl = with_records(load_timeline(str(trace)), records)
    write_text(args.output, render_timeline_html(tl, title=f"lab {Path(args.dir).name}"))
    return 0
