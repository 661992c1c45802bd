"""goblueprint source verify: judge a hand-drawn Mermaid state diagram against the source."""

from __future__ import annotations

import argparse

HELP = "check each edge of a Mermaid G/P state diagram against the transitions in the source"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    from goblueprint.source.cli_common import add_goroot_args

    parser.add_argument("diagram", metavar="DIAGRAM.mmd")
    parser.add_argument("--machine", choices=("g", "p"), required=True)
    add_goroot_args(parser)
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from goblueprint.cli._paths import input_file, reading
    from goblueprint.errors import SourceError
    from goblueprint.source import diagram, states, tables, verify
    from goblueprint.source.calls import CallGraph
    from goblueprint.source.cli_common import load_facts, print_json

    path = input_file(args.diagram)
    with reading(path):
        data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path}: not a Mermaid diagram (not UTF-8 text at byte {exc.start})") from None
    edges = diagram.parse(text, args.diagram)
    facts = load_facts(args)
    bp = states.blueprint(facts, args.machine)
    result = verify.verify(edges, bp, CallGraph(facts), tables.MACHINES[args.machine].prefix)
    refuted = any(e["verdict"] == "refuted" for e in result["edges"])
    if args.json:
        print_json(result)
        return 1 if refuted else 0
    for e in result["edges"]:
        label = f" [{e['label']}]" if e["label"] else ""
        line = f"line {e['line']}: {e['from']} -> {e['to']}{label}: {e['verdict'].upper()}"
        if e["verdict"] == "confirmed":
            sites = ", ".join(f"{t['function']} {t['file']}:{t['line']}" for t in e["evidence"][:3])
            more = len(e["evidence"]) - 3
            line += f" ({'' if e['exact'] else 'prior status unstated; '}{sites}{f' +{more}' if more > 0 else ''})"
        elif e["verdict"] == "refuted":
            path = " -> ".join(e["nearest_path"]) if e["nearest_path"] else "none"
            line += f"; nearest real path: {path}"
        else:
            line += f"; {e['reason']}"
        if e["label_matches"]:
            line += f"; label {e['label_matches']}"
        print(line)
    if result["missing"]:
        print(f"missing from the diagram ({len(result['missing'])}):")
        for m in result["missing"]:
            print(f"  {m['from']} -> {m['to']}: {', '.join(m['functions'][:4])}")
    return 1 if refuted else 0
