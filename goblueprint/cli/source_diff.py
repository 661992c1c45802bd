"""goblueprint source diff: what changed in the scheduler between two releases."""

from __future__ import annotations

import argparse

HELP = "states, transitions, struct fields and scheduler functions added/removed between two GOROOTs"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    a = parser.add_mutually_exclusive_group(required=True)
    a.add_argument("--from-goroot", metavar="A")
    a.add_argument("--from", dest="from_go", metavar="VERSION", help="an installed release, e.g. 1.22")
    b = parser.add_mutually_exclusive_group(required=True)
    b.add_argument("--to-goroot", metavar="B")
    b.add_argument("--to", dest="to_go", metavar="VERSION")
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from goblueprint.source import diff, facts
    from goblueprint.source.cli_common import print_json

    fa = facts.load(facts.resolve(goroot=args.from_goroot, go=args.from_go))
    fb = facts.load(facts.resolve(goroot=args.to_goroot, go=args.to_go))
    result = diff.diff(fa, fb)
    if args.json:
        print_json(result)
        return 0
    print(f"Go {result['from_version']} -> Go {result['to_version']}")
    for m, d in result["states"].items():
        renamed = "".join(f"  {r['from']} became {r['to']}" for r in d["renamed"])
        print(
            f"{m.upper()} states: +{', '.join(d['added']) or '-'}  -{', '.join(d['removed']) or '-'}{renamed}"
        )
    for m, d in result["transitions"].items():
        print(f"{m.upper()} transitions: {len(d['added'])} added, {len(d['removed'])} removed")
        for sign, key in (("+", "added"), ("-", "removed")):
            for t in d[key]:
                ind = " (indirect)" if t["indirect"] else ""
                print(f"  {sign} {t['from']} -> {t['to']} in {t['function']} via {t['mechanism']}{ind}"
                      f" ({t['file']}:{t['line']})")  # fmt: skip
    for name, d in result["structs"]["changed"].items():
        if name in ("g", "m", "p", "schedt", "sudog", "gobuf"):
            parts = [f"+{f['name']}" for f in d["added"]] + [f"-{f['name']}" for f in d["removed"]]
            parts += [f"~{f['name']} ({f['from']} -> {f['to']})" for f in d["retyped"]]
            print(f"struct {name}: {' '.join(parts)}")
    f = result["functions"]
    print(f"scheduler functions: +{len(f['added'])} -{len(f['removed'])} renamed {len(f['renamed'])}")
    for r in f["renamed"]:
        print(f"  {r['from']} -> {r['to']} ({r['file']}, similarity {r['similarity']})")
    return 0
