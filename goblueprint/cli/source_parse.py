"""goblueprint source parse: parse every non-testdata .go file of a GOROOT with go/parser."""

from __future__ import annotations

import argparse

HELP = "parse every non-testdata .go file under GOROOT/src (go/parser via the helper); exit 1 on errors"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    from goblueprint.source.cli_common import add_goroot_args

    add_goroot_args(parser)
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from goblueprint.source import facts
    from goblueprint.source.cli_common import print_json

    root = facts.resolve(goroot=args.goroot, go=args.go)
    report = facts.parse_check(root)
    if args.json:
        print_json({"go_version": root.version, **report})
    else:
        print(f"Go {root.version}: {report['files']} files, {len(report['errors'])} parse errors")
        for err in report["errors"]:
            print(f"  {err}")
    return 1 if report["errors"] else 0
