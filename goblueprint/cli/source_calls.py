"""goblueprint source calls: call paths between two runtime functions."""

from __future__ import annotations

import argparse

HELP = "call paths FROM -> TO, through systemstack/mcall closures, go statements and assembly"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    from goblueprint.source.cli_common import add_goroot_args

    parser.add_argument("src", metavar="FROM")
    parser.add_argument("dst", metavar="TO")
    parser.add_argument("--depth", type=int, default=8, help="longest path, in calls (default 8)")
    parser.add_argument("--limit", type=int, default=20, help="most paths to print (default 20)")
    add_goroot_args(parser)
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from goblueprint.source.calls import CallGraph
    from goblueprint.source.cli_common import load_facts, print_json

    graph = CallGraph(load_facts(args))
    paths = graph.paths(args.src, args.dst, depth=args.depth, limit=args.limit)
    if args.json:
        print_json({"from": graph.resolve(args.src), "to": graph.resolve(args.dst),
                    "paths": [[e.as_json() for e in p] for p in paths]})  # fmt: skip
        return 0
    if not paths:
        print(f"no call path from {args.src} to {args.dst} within {args.depth} calls")
        return 1
    for p in paths:
        hops = [p[0].caller] + [
            f"-[{e.kind} {e.file.removeprefix('src/runtime/')}:{e.line}]-> {e.callee}" for e in p
        ]
        print(" ".join(hops))
    return 0
