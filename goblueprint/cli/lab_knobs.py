"""goblueprint lab knobs: scheduler constants a lab build can change, from the release's source."""

from __future__ import annotations

import argparse

HELP = "scheduler constants `lab ab --knob` can change, with their values and source lines"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--go", metavar="VERSION", help="Go release to read (default: the bundled one)")
    parser.add_argument("--json", action="store_true", help='print {"go_version", "knobs": [...]}')


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.lab import knobs
    from goblueprint.source import facts

    root = facts.resolve(go=args.go)
    found = knobs.read(root)
    if args.json:
        sys.stdout.write(
            json.dumps({"go_version": root.version, "knobs": found}, sort_keys=True, indent=2) + "\n"
        )
        return 0
    print(f"Go {root.version}")
    for k in found:
        if k["missing"]:
            print(f"  {k['name']:<24} (not in this release: {k['missing']})")
            continue
        where = ", ".join(f"{s['file']}:{s['line']}" for s in k["sites"])
        low, high = k["range"]
        print(f"  {k['name']:<24} {k['value']:<10} {k['type']} [{low}, {high}]  {where}")
        print(f"  {'':<24} {k['what']}")
    return 0
