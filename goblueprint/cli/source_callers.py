"""goblueprint source callers: who calls a runtime function, and how."""

from __future__ import annotations

import argparse

HELP = "direct callers of a runtime function (calls, closures, go, mcall, assembly)"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    from goblueprint.source.cli_common import add_goroot_args

    parser.add_argument("func", metavar="F")
    add_goroot_args(parser)
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from goblueprint.source.calls import CallGraph
    from goblueprint.source.cli_common import load_facts, print_json

    edges = CallGraph(load_facts(args)).callers(args.func)
    if args.json:
        print_json([e.as_json() for e in edges])
        return 0
    for e in edges:
        print(f"{e.caller}\t{e.kind}\t{e.file}:{e.line}")
    return 0
