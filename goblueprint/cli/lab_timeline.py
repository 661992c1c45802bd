"""goblueprint lab timeline: the run's trace timeline with the lab records drawn in."""

from __future__ import annotations

import argparse

from goblueprint.cli._partial import add_partial_flag

HELP = "HTML timeline of a lab run: the trace plus run-queue counters, steal arrows and sysmon marks"
# `trace timeline DIR/trace.out --lab DIR` draws the same page; `trace export --lab DIR`
# writes it for Perfetto.


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="a `lab observe` output folder")
    parser.add_argument("-o", "--output", required=True, metavar="OUT.html")
    add_partial_flag(parser)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from goblueprint.cli._partial import finish
    from goblueprint.cli._paths import input_dir, output_file, output_format, writing
    from goblueprint.cli.trace_timeline import load_timeline
    from goblueprint.lab import records
    from goblueprint.render.timeline_html import render_timeline_html

    out = output_file(args.output)
    output_format(out, {".html": "html", ".htm": "html"}, what="a lab timeline", default="html")
    folder = input_dir(args.dir)
    if not (folder / records.SITES_FILE).is_file():
        records.load(folder)  # first: a folder that is no lab run is the likelier mistake; it says why
    # The same path as `trace timeline --lab DIR`, so both pages are the same.
    tl, reader = load_timeline(Path(args.dir) / "trace.out", lab=args.dir)
    text = render_timeline_html(tl, title=f"lab {Path(args.dir).name}")
    with writing(out):
        out.write_text(text, encoding="utf-8")
    return finish(reader, args, f"the timeline covers the {reader.events_read} events before it")
