"""goblueprint source struct: fields, types and comments of a runtime struct."""

from __future__ import annotations

import argparse

HELP = "fields, types and comments of a runtime struct (g, m, p, schedt, ...)"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    from goblueprint.source.cli_common import add_goroot_args

    parser.add_argument("type", metavar="TYPE")
    add_goroot_args(parser)
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    import difflib

    from goblueprint.errors import SourceError
    from goblueprint.source.cli_common import load_facts, print_json

    facts = load_facts(args)
    name = args.type.removeprefix("runtime.")
    structs = {s["name"]: s for s in facts["structs"]}
    if name not in structs:
        near = difflib.get_close_matches(name, list(structs), n=5)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        raise SourceError(f"no struct {name} in the runtime of Go {facts.get('go_version')}{hint}")
    s = structs[name]
    if args.json:
        print_json(s)
        return 0
    print(f"type {s['name']} struct  // {s['file']}:{s['line']}")
    for f in s["fields"]:
        comment = f["comment"].split("\n")[0]
        emb = " (embedded)" if f["embedded"] else ""
        print(f"  {f['name']:<24} {f['type']:<28}{emb} {('// ' + comment) if comment else ''}".rstrip())
    return 0
