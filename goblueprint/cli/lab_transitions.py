"""goblueprint lab transitions: the G or P status edges a lab run observed."""

from __future__ import annotations

import argparse

HELP = "observed G or P status transitions with their real prior state and source line"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="a `lab observe` output folder")
    parser.add_argument("--machine", choices=("g", "p"), required=True)
    parser.add_argument("--json", action="store_true", help='print {"transitions": [...]}')


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.cli._paths import input_dir
    from goblueprint.lab import records, transitions
    from goblueprint.source import facts

    table, dump = records.load(input_dir(args.dir))
    root = facts.resolve(go=table["go_version"])
    rows = transitions.transitions(table, dump, facts.load(root), args.machine)
    if args.json:
        sys.stdout.write(json.dumps({"transitions": rows}, sort_keys=True, indent=2) + "\n")
        return 0
    for note in table.get("messages", []):
        print(f"note: {note}", file=sys.stderr)
    width = max((len(f"{r['from']} -> {r['to']}") for r in rows), default=10)
    for r in rows:
        edge = f"{r['from']} -> {r['to']}"
        print(f"{r['count']:>9}  {edge:<{width}}  {r['function']} {r['file']}:{r['line']}")
    return 0
