"""goblueprint source states: the G or P state machine of a Go release, with evidence."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "status transitions of the G or P state machine, each with its source line"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    from goblueprint.source.cli_common import add_goroot_args

    parser.add_argument("--machine", choices=("g", "p"), required=True)
    add_goroot_args(parser)
    parser.add_argument("--format", choices=("json", "mermaid", "dot", "svg", "html", "md"), default="json")
    parser.add_argument(
        "--indirect",
        action="store_true",
        help="diagrams: also draw calls of P-status wrappers (JSON always lists them)",
    )


def run(args: argparse.Namespace) -> int:
    from goblueprint.source import facts, render_statemachine, states

    root = facts.resolve(goroot=args.goroot, go=args.go)
    bp = states.blueprint(facts.load(root), args.machine)
    if args.format == "html":
        from goblueprint.source import render_statemachine_html

        sys.stdout.write(render_statemachine_html.page(bp, root.path, include_indirect=args.indirect))
    elif args.format == "json":
        sys.stdout.write(json.dumps(bp.as_json(), sort_keys=True, indent=2) + "\n")
    elif args.format == "md":
        sys.stdout.write(render_statemachine.markdown(bp))
    else:
        sys.stdout.write(render_statemachine.WRITERS[args.format](bp, include_indirect=args.indirect))
    return 0
