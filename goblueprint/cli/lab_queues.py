"""goblueprint lab queues: local run-queue length per P over time."""

from __future__ import annotations

import argparse

HELP = "local run-queue length of each P over time, from a lab run"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="a `lab observe` output folder")
    parser.add_argument(
        "--json", action="store_true", help='print {"queues": {P: [[t, length], ...]}, "summary"}'
    )


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.cli._lab_common import load_frame
    from goblueprint.lab import runqueues

    _table, frame = load_frame(args.dir, notes=not args.json)
    lengths = runqueues.queue_lengths(frame)
    summary = runqueues.queue_summary(lengths)
    if args.json:
        queues: dict[str, list[list[int]]] = {}
        for (p,), part in lengths.group_by(["p"], maintain_order=True):
            queues[str(p)] = part.select("t", "length").rows()
        out = {"queues": queues, "summary": summary}
        sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
        return 0
    print(f"{'P':>4} {'samples':>9} {'max':>5} {'mean':>8}")
    for row in summary:
        print(f"{row['p']:>4} {row['samples']:>9} {row['max']:>5} {row['mean']:>8.2f}")
    return 0
