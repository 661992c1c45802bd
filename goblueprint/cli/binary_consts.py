"""goblueprint binary consts"""

from __future__ import annotations

import argparse
import re

HELP = "constants recorded in DWARF (_Grunning, forcePreemptNS, ...)"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("binary", metavar="BIN", help="a Go ELF binary with DWARF")
    parser.add_argument(
        "--grep", metavar="RE", help="only constants whose name matches this regular expression"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from goblueprint.binary import text
    from goblueprint.binary.session import open_all
    from goblueprint.errors import UsageError

    opened = open_all(args.binary, need_dwarf=True)
    if opened.dwarf is None:  # open_all raised already; this keeps the type checker informed
        return 1
    rows = opened.dwarf.consts
    if args.grep:
        try:
            pattern = re.compile(args.grep)
        except re.error as exc:
            raise UsageError(f"bad --grep expression {args.grep!r}: {exc}") from exc
        rows = {k: v for k, v in rows.items() if pattern.search(k)}
    if args.json:
        print(text.dumps([{"name": k, "value": v[0], "type": v[1]} for k, v in sorted(rows.items())]))
    else:
        print(text.consts(rows))
    return 0
