"""goblueprint simulate: the scheduler model on a workload, and its comparisons.

goblueprint simulate WORKLOAD [--policy P] [--procs N] [--seed N] [...]
goblueprint simulate compare --trace REAL.trace [--seed N] [--json]
goblueprint simulate ab WORKLOAD --a POLICY --b POLICY [--seeds 30] [--json]
goblueprint simulate predict --knob NAME=VALUE --trace REAL.trace [--json]
"""

from __future__ import annotations

import argparse

HELP = "simulate Go's scheduler on a workload or a trace's replay (actions: compare, ab, predict)"
ACTIONS = ("compare", "ab", "predict")


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    # Optional so that `simulate --list-policies` needs no workload (the policies are the model's).
    parser.add_argument("target", metavar="WORKLOAD|compare|ab|predict", nargs="?",
                        help="a workload file (.toml/.json), a trace to replay (.trace), or an action")  # fmt: skip
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="the action's options (ACTION --help)")
    parser.add_argument("--list-policies", action="store_true", help="list the policies and exit")


def _sub(name: str) -> argparse.ArgumentParser:
    from goblueprint.cli import _Parser

    return _Parser(prog=f"goblueprint simulate {name}")


def run(args: argparse.Namespace) -> int:
    from goblueprint.errors import UsageError

    if args.list_policies:
        return _list_policies()
    if args.target is None:
        raise UsageError("simulate: expected a WORKLOAD, a .trace or an action (compare, ab, predict)")
    if args.target in ACTIONS:
        import importlib

        module = importlib.import_module(f"goblueprint.cli._simulate_{args.target}")
        parser = _sub(args.target)
        parser.description = module.HELP
        module.prepare_parser(parser)
        return int(module.run(parser.parse_args(args.rest)))
    parser = _sub("WORKLOAD")
    _prepare_run(parser)
    sub = parser.parse_args(args.rest)
    return _run(args.target, sub)


def _prepare_run(parser: argparse.ArgumentParser) -> None:
    from goblueprint.cli._simulate_common import add_model_options

    add_model_options(parser)
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
    parser.add_argument("--decisions", metavar="FILE", help="write the decision log (.csv or .parquet)")
    parser.add_argument("--query", metavar="SQL", help="SQL over the decision log (table: decisions)")
    parser.add_argument("--schedtrace", metavar="MS", type=int, default=0,
                        help="print GODEBUG=schedtrace-format lines every MS of simulated time")  # fmt: skip
    parser.add_argument("--html", metavar="FILE", help="the simulated timeline as the trace side's HTML view")
    parser.add_argument("--list-policies", action="store_true", help="list the policies and exit")


def _list_policies() -> int:
    from goblueprint.model import policies

    for name, (what, points) in policies.REGISTRY.items():
        print(f"{name:<14} {', '.join(points) or 'all points'}: {what}")
    return 0


def _run(target: str, args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.cli._paths import input_file, output_file, writing
    from goblueprint.cli._simulate_common import check_procs, constants, load_trace_program, set_cpus
    from goblueprint.errors import UsageError
    from goblueprint.model import api, measure, policies, workload

    if args.list_policies:
        return _list_policies()
    check_procs(args.procs)
    policy = policies.resolve(args.policy)
    if target.endswith(".trace"):
        _, prog = load_trace_program(target)
    else:
        prog = workload.load(input_file(target))
    set_cpus(prog, args.cpus)
    for path in (args.decisions, args.html):
        if path:
            output_file(path)
    result = api.simulate(prog, constants(args), policy, procs=args.procs, seed=args.seed,
                          schedtrace_ms=args.schedtrace)  # fmt: skip
    for line in result.schedtrace:
        print(line)
    if args.decisions:
        with writing(args.decisions):
            if args.decisions.endswith(".parquet"):
                result.decisions.write_parquet(args.decisions)
            elif args.decisions.endswith(".csv"):
                result.decisions.write_csv(args.decisions)
            else:
                raise UsageError(f"--decisions {args.decisions}: expected a .csv or .parquet name")
    if args.html:
        from goblueprint.render.timeline_html import render_timeline_html

        with writing(args.html):
            with open(args.html, "w") as out:
                out.write(render_timeline_html(result.timeline, title=f"simulated: {target}"))
    if args.query:
        import polars as pl

        try:
            table = pl.SQLContext(decisions=result.decisions).execute(args.query, eager=True)
        except (pl.exceptions.PolarsError, ValueError) as exc:
            raise UsageError(f"--query: {str(exc).splitlines()[0]}") from None
        table.write_csv(sys.stdout)
        return 0
    got = measure.of_sim(result)
    got["procs"] = result.procs
    got["policy"] = "+".join(policy.names)
    got["seed"] = args.seed
    if args.json:
        sys.stdout.write(json.dumps(got, sort_keys=True, indent=2) + "\n")
    else:
        for name in sorted(got):
            print(f"{name:<22} {got[name]}")
    return 0
