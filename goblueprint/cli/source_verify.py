"""goblueprint source verify: judge a hand-drawn Mermaid state diagram against the source."""

from __future__ import annotations

import argparse
import sys

HELP = (
    "check each edge of a Mermaid G/P state diagram against the source; "
    "exit 0 when all are confirmed, 1 when any is refuted or unknown, 2 on bad input"
)


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    from goblueprint.source.cli_common import add_goroot_args

    parser.add_argument("diagram", metavar="DIAGRAM.mmd")
    parser.add_argument("--machine", choices=("g", "p"), required=True)
    add_goroot_args(parser)
    parser.add_argument(
        "--observed",
        metavar="DIR",
        help="run-time records: a `lab observe` folder, or DIR/transitions.json ({machine, transitions: "
        "[{from, to, function, file, line, count}]}); an edge seen there is confirmed by observation",
    )
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from goblueprint.errors import GoblueprintError

    try:
        result = _verify(args)
    except GoblueprintError as exc:
        # Bad input is told apart from a diagram that fails the check (exit 1).
        print(f"goblueprint: error: {exc}", file=sys.stderr)
        return 2
    from goblueprint.source import verify
    from goblueprint.source.cli_common import print_json

    if args.json:
        print_json(result)
    else:
        _print(result)
    return verify.exit_status(result)


def _verify(args: argparse.Namespace) -> dict:
    from goblueprint.cli._paths import input_file, reading
    from goblueprint.errors import SourceError
    from goblueprint.source import diagram, observed, states, tables, verify
    from goblueprint.source.calls import CallGraph
    from goblueprint.source.cli_common import load_facts

    path = input_file(args.diagram)
    with reading(path):
        data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path}: not a Mermaid diagram (not UTF-8 text at byte {exc.start})") from None
    edges = diagram.parse(text, args.diagram)
    seen = observed.observed_edges(args.observed, args.machine) if args.observed else None
    facts = load_facts(args)
    if args.observed:
        observed.check_release(args.observed, facts.get("go_version"))
    bp = states.blueprint(facts, args.machine)
    result = verify.verify(edges, bp, CallGraph(facts), tables.MACHINES[args.machine].prefix)
    if seen is not None:
        result = observed.apply(result, seen)
    return result


def _print(result: dict) -> None:
    for e in result["edges"]:
        label = f" [{e['label']}]" if e["label"] else ""
        line = f"line {e['line']}: {e['from']} -> {e['to']}{label}: {e['verdict'].upper()}"
        sites = ", ".join(f"{t['function']} {t['file']}:{t['line']}" for t in e["evidence"][:3])
        more = len(e["evidence"]) - 3
        sites += f" +{more}" if more > 0 else ""
        if e.get("confirmed_by") == "observation":
            line += f" by observation ({e['observed']['count']} times; statically {e['static_verdict']})"
        elif e["verdict"] == "confirmed":
            line += f" ({sites}; prior status by {', '.join(e['prior_rules'])})"
        elif e["verdict"] == "refuted" and e.get("removed"):
            line += f"; {e['reason']}"
        elif e["verdict"] == "refuted":
            path = " -> ".join(e["nearest_path"]) if e["nearest_path"] else "none"
            line += f"; nearest real path: {path}"
        else:
            line += f"; {e['reason']}" + (f" ({sites})" if sites else "")
        if e["label_matches"]:
            line += f"; label {e['label_matches']}"
        print(line)
    if result["missing"]:
        print(f"missing from the diagram ({len(result['missing'])}):")
        for m in result["missing"]:
            print(f"  {m['from']} -> {m['to']}: {', '.join(m['functions'][:4])}")
    observed_wild = [w for w in result["wildcards"] if w.get("observed_from")]
    for w in observed_wild:
        seen = ", ".join(f"{k} x{v}" for k, v in w["observed_from"].items())
        print(f"observed prior of * -> {w['to']} in {w['function']} {w['file']}:{w['line']}: {seen}")
