"""goblueprint lab ab: baseline runtime against one with knobs changed, runs interleaved."""

from __future__ import annotations

import argparse

from goblueprint.cli._program_args import add_program_arguments, program_command

HELP = "compare a program on the runtime as released and with scheduler knobs changed (bootstrap CIs)"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--knob", action="append", default=[], metavar="NAME=VALUE", help="see `lab knobs`")
    parser.add_argument("--runs", type=int, default=5, metavar="N", help="runs per side (default 5)")
    parser.add_argument("-o", "--out", default="lab-ab", metavar="DIR", help="run folders (default ./lab-ab)")
    parser.add_argument("--json", action="store_true", help='print {"knobs", "runs", "metrics"}')
    add_program_arguments(parser, each_run=True)


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.cli._paths import output_dir
    from goblueprint.lab import ab, knobs
    from goblueprint.source import facts

    command = program_command(args, "goblueprint lab ab --knob NAME=VALUE [options] -- COMMAND ...")
    settings = knobs.parse_settings(args.knob, knobs.read(facts.resolve(go=args.go)))
    result = ab.ab(
        command,
        output_dir(args.out),
        settings,
        runs=args.runs,
        go=args.go,
        procs=args.procs,
        timeout=args.timeout,
        progress=None if args.json else lambda line: print(line, file=sys.stderr),
    )
    if args.json:
        sys.stdout.write(json.dumps(result, sort_keys=True, indent=2) + "\n")
        return 0
    print(
        f"knobs: {', '.join(f'{k}={v}' for k, v in result['knobs'].items())}; {result['runs']} runs per side"
    )
    from goblueprint.cli._ab_table import print_ab_table

    print_ab_table(result["metrics"], result["runs"])
    return 0
