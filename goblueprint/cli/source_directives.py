"""goblueprint source directives: the //go: directives of each runtime function."""

from __future__ import annotations

import argparse

HELP = "//go: directives per runtime function (e.g. --name nosplit)"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    from goblueprint.source.cli_common import add_goroot_args

    parser.add_argument("--name", help="only this directive, e.g. nosplit or go:nowritebarrierrec")
    parser.add_argument("funcs", nargs="*", metavar="FUNC", help="only these functions")
    add_goroot_args(parser)
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from goblueprint.source.cli_common import load_facts, print_json

    facts = load_facts(args)
    want = args.name.removeprefix("//").removeprefix("go:") if args.name else None
    only = set(args.funcs)
    rows = {}
    for f in facts["funcs"]:
        if only and f["name"] not in only:
            continue
        found = [d for d in f["directives"] if want is None or d.split()[0] == f"go:{want}"]
        if found:
            rows[f["name"]] = {"directives": found, "file": f["file"], "line": f["line"]}
    if args.json:
        print_json(rows)
        return 0
    for name in sorted(rows):
        r = rows[name]
        print(f"{name}\t{' '.join('//' + d for d in r['directives'])}\t{r['file']}:{r['line']}")
    return 0
