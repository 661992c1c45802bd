"""goblueprint trace ingest: read a trace once and store its tables as Parquet for every later view."""

from __future__ import annotations

import argparse
import json
import sys

from goblueprint.cli._partial import add_trace_argument, finish

HELP = "read a trace once and store its tables (Parquet) for every later view and query"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_trace_argument(parser, "execution trace file (Go 1.22 or newer)")
    parser.add_argument(
        "-o", "--output", metavar="DIR",
        help="write the tables to DIR (new or empty, or earlier ingested tables) instead of the cache",
    )  # fmt: skip
    parser.add_argument("--force", action="store_true", help="make the tables again even if sound ones exist")
    parser.add_argument("--json", action="store_true", help="print the manifest as JSON")
    parser.description = (
        "Views (timeline, export, sql) ingest a trace the first time they read it; this does it "
        "explicitly. The tables are found again by the trace's content, wherever the file is, and "
        "are checked (content, code, every file's hash) before each use: anything stale or damaged "
        "is made again."
    )


def run(args: argparse.Namespace) -> int:
    from goblueprint.cli._paths import input_file
    from goblueprint.timeline.ingest import ingest
    from goblueprint.trace.progress import progress

    path = input_file(args.trace)
    with progress(f"ingesting {path.name}", unit="events") as advance:
        found = ingest(path, out=args.output, progress=advance, force=args.force)
    if args.json:
        json.dump({"path": str(found.path), **found.manifest}, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        tables = found.manifest["tables"]
        width = max(map(len, tables))
        print(found.path)
        for name, rows in tables.items():
            print(f"  {name:<{width}}  {rows:>12,} rows")
    return finish(found, args, f"the tables hold the {found.events_read} events before it")
