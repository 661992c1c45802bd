"""goblueprint trace export: the timeline for other tools (Perfetto, Chrome's trace viewer, Parquet)."""

from __future__ import annotations

import argparse

from goblueprint.errors import UsageError

HELP = "export a trace's timeline as Perfetto protobuf, Chrome trace JSON or Parquet tables"
FORMATS = ("perfetto", "chrome", "parquet")


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", "-f", required=True, choices=FORMATS, help="output format")
    parser.add_argument("trace", metavar="TRACE", help="execution trace file (Go 1.22 or newer)")
    parser.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="output file (a directory for parquet)"
    )
    parser.add_argument(
        "--kernel", metavar="DIR", help="add the kernel lanes/tables of a capture made with --kernel"
    )


def run(args: argparse.Namespace) -> int:
    kernel = getattr(args, "kernel", None)
    from goblueprint.cli.trace_timeline import load_timeline

    if args.format == "parquet":
        # Given the path, V1's writer also adds the tables that come from the events themselves.
        from pathlib import Path

        from goblueprint.timeline.tables import write_parquet

        if not Path(args.trace).is_file():
            raise UsageError(f"{args.trace}: no such trace file")
        write_parquet(args.trace, args.output)
        if kernel:
            from goblueprint.kernel.views import write_kernel_parquet

            write_kernel_parquet(args.trace, kernel, args.output)
        return 0
    tl = load_timeline(args.trace, kernel)
    if args.format == "perfetto":
        from goblueprint.timeline.export_perfetto import write_perfetto

        write_perfetto(tl, args.output)
    else:
        from goblueprint.timeline.export_chrome import write_chrome

        write_chrome(tl, args.output)
    return 0
