"""goblueprint source contracts: interfaces, their method sets, embedding and implementers."""

from __future__ import annotations

import argparse

HELP = "interfaces of packages, their methods and embeddings, and which types implement them"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    from goblueprint.source.cli_common import add_goroot_args

    parser.add_argument("packages", nargs="+", metavar="PKG")
    add_goroot_args(parser)
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from goblueprint.source import facts
    from goblueprint.source.cli_common import print_json

    data = facts.contracts(facts.resolve(goroot=args.goroot, go=args.go), args.packages)
    if args.json:
        print_json(data)
        return 0
    for i in data["interfaces"]:
        print(f"interface {i['name']}  // {i['file']}:{i['line']}")
        print(f"  declares: {', '.join(i['declared']) or '-'}")
        print(f"  embeds:   {', '.join(i['embedded']) or '-'}")
        print(f"  methods:  {', '.join(i['methods']) or '-'}")
    for t in data["types"]:
        line = f"{t['type']} ({t['kind']}) implements {', '.join(t['implements']) or '-'}"
        if t["via_pointer"]:
            line += f"; *{t['type'].split('.')[-1]} also {', '.join(t['via_pointer'])}"
        print(line)
    return 0
