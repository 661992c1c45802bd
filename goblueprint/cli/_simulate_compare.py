"""goblueprint simulate compare: a real trace against the model replaying its work."""

from __future__ import annotations

import argparse

HELP = "replay a trace's work on its GOMAXPROCS and report real against simulated metrics"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", required=True, metavar="REAL.trace")
    parser.add_argument("--seed", type=int, default=1, metavar="N")
    parser.add_argument("--go", metavar="VERSION", help="the release whose source gives the constants")
    parser.add_argument("--json", action="store_true", help='print {"real": {...}, "sim": {...}}')


def compare(trace: str, seed: int, go: str | None) -> dict:
    from goblueprint.cli._simulate_common import load_trace_program
    from goblueprint.model import api, measure, policies
    from goblueprint.model.constants import from_source

    tl, prog = load_trace_program(trace)
    real = measure.from_timeline(tl, prog.procs)
    consts = from_source(go)
    result = api.simulate(prog, consts, policies.resolve([]), seed=seed, decisions=False)
    # Which rules replayed the trace: the model follows its constants' release where the
    # source differs (docs/model.md), and the default is the bundled one, whatever made the trace.
    versions = {"trace_format": tl.go_version, "model": consts.go_version}
    return {"procs": prog.procs, "go": versions, "real": real, "sim": measure.of_sim(result)}


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.model.measure import COMPARED

    out = compare(args.trace, args.seed, args.go)
    if args.json:
        sys.stdout.write(json.dumps(out, sort_keys=True, indent=2) + "\n")
        return 0
    print(
        f"GOMAXPROCS {out['procs']}; trace format Go {out['go']['trace_format']}, model Go {out['go']['model']}"
    )
    print(f"{'metric':<22} {'real':>14} {'sim':>14}")
    for name in COMPARED:
        print(f"{name:<22} {out['real'][name]:>14.6g} {out['sim'][name]:>14.6g}")
    return 0
