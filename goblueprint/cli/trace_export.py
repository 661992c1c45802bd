"""goblueprint trace export: the timeline for other tools (Perfetto, Chrome's trace viewer, Parquet)."""

from __future__ import annotations

import argparse

from goblueprint.cli._lab_args import add_lab_argument
from goblueprint.cli._partial import add_trace_argument, finish
from goblueprint.cli._paths import output_dir, output_file, output_format, writing

HELP = "export a trace's timeline as Perfetto protobuf, Chrome trace JSON or Parquet tables"
FORMATS = ("perfetto", "chrome", "parquet")
# What an output's name says; parquet is a directory of tables, so it has no extension.
EXTENSIONS = {".perfetto-trace": "perfetto", ".pftrace": "perfetto", ".json": "chrome"}


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", "-f", choices=FORMATS,
        help="output format (default: from OUT's extension: .perfetto-trace/.pftrace, .json)",
    )  # fmt: skip
    add_trace_argument(parser, "execution trace file (Go 1.22 or newer)")
    parser.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="output file (a directory for parquet)"
    )
    parser.add_argument(
        "--kernel", metavar="DIR", help="add the kernel lanes/tables of a capture made with --kernel"
    )
    add_lab_argument(parser)


def run(args: argparse.Namespace) -> int:
    fmt = output_format(
        args.output, EXTENSIONS, what="an export", chosen=args.format,
        hints={"": "or give --format; --format parquet writes a directory"},
    )  # fmt: skip
    if fmt == "parquet":
        from goblueprint.cli._ingested import ingested_trace
        from goblueprint.timeline.ingest import copy_tables

        out = output_dir(args.output, create=False)
        reader = ingested_trace(args.trace)
        written = copy_tables(reader, out)
        if args.kernel:
            from goblueprint.kernel.views import write_kernel_parquet

            written += write_kernel_parquet(args.trace, args.kernel, str(out))
        if args.lab:
            from goblueprint.lab.views import write_lab_parquet

            written += write_lab_parquet(args.lab, out)
        covers = f"the {len(written)} tables cover the {reader.events_read} events before it"
        return finish(reader, args, covers)
    out = output_file(args.output)
    if fmt == "perfetto" and not args.kernel and not args.lab:
        # Streamed from the ingested tables, lane by lane: the Timeline is never in memory.
        from goblueprint.cli._ingested import ingested_trace
        from goblueprint.timeline.export_perfetto import write_perfetto_ingested

        found = ingested_trace(args.trace)
        with writing(out):
            write_perfetto_ingested(found, out)
        return finish(found, args, f"the {fmt} file covers the {found.events_read} events before it")
    from goblueprint.cli.trace_timeline import load_timeline

    tl, reader = load_timeline(args.trace, args.kernel, lab=args.lab)
    with writing(out):
        if fmt == "perfetto":
            from goblueprint.timeline.export_perfetto import write_perfetto

            write_perfetto(tl, out)
        else:
            from goblueprint.timeline.export_chrome import write_chrome

            write_chrome(tl, out)
    return finish(reader, args, f"the {fmt} file covers the {reader.events_read} events before it")
