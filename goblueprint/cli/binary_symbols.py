"""goblueprint binary symbols"""

from __future__ import annotations

import argparse
import re

HELP = "functions and data symbols of a Go binary: addresses, sizes, sections"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("binary", metavar="BIN", help="a Go ELF binary (amd64 or arm64)")
    parser.add_argument(
        "--grep", metavar="RE", help="only symbols whose name matches this regular expression"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from goblueprint.binary import text
    from goblueprint.binary.session import open_all
    from goblueprint.errors import UsageError

    opened = open_all(args.binary, warn=not args.json)
    rows = opened.symbols.rows
    if args.grep:
        try:
            pattern = re.compile(args.grep)
        except re.error as exc:
            raise UsageError(f"bad --grep expression {args.grep!r}: {exc}") from exc
        rows = [r for r in rows if pattern.search(r["name"])]
    rows = sorted(rows, key=lambda r: (r["address"], r["name"]))
    if args.json:
        print(text.dumps({"source": opened.symbols.source, "symbols": rows}))
    else:
        print(text.symbols(rows, opened.symbols.source))
    return 0
