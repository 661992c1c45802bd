"""goblueprint lab steals: every run-queue steal of a lab run."""

from __future__ import annotations

import argparse

HELP = "run-queue steals of a lab run: thief P, victim P, goroutines taken, runnext"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="a `lab observe` output folder")
    parser.add_argument("--json", action="store_true", help='print {"steals": [...]}')


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.cli._lab_common import load_frame
    from goblueprint.lab import runqueues

    _table, frame = load_frame(args.dir, notes=not args.json)
    rows = runqueues.steals(frame)
    if args.json:
        sys.stdout.write(json.dumps({"steals": rows}, sort_keys=True, indent=2) + "\n")
        return 0
    t0 = int(frame["t"].min()) if frame.height else 0
    print(f"{len(rows)} steals, {sum(r['count'] for r in rows)} goroutines moved")
    for r in rows:
        extra = " (runnext)" if r["runnext"] else ""
        print(
            f"  +{(r['t'] - t0) / 1e6:10.3f} ms  P{r['thief']} <- P{r['victim']}  "
            f"{r['count']} of {r['victim_queue']}{extra}"
        )
    return 0
