"""goblueprint simulate predict: what changing lab knobs would do to a traced program's metrics."""

from __future__ import annotations

import argparse

HELP = "predict the change in each lab metric when scheduler knobs change (the lab's knob names)"
METRICS = ("preemptions", "steals", "sysmon_wakeups", "sched_latency_p50_ns", "sched_latency_p99_ns",
           "migrations", "wall_ns")  # fmt: skip


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--knob", action="append", default=[], metavar="NAME=VALUE", help="see `lab knobs`")
    parser.add_argument("--trace", required=True, metavar="REAL.trace")
    parser.add_argument(
        "--seeds", type=int, default=5, metavar="N", help="seeds averaged per side (default 5)"
    )
    parser.add_argument("--procs", type=int, default=0, metavar="N", help="GOMAXPROCS (default: the trace's)")
    parser.add_argument("--go", metavar="VERSION", help="the release whose source gives the constants")
    parser.add_argument(
        "--json", action="store_true", help='print {"knobs", "metrics": {NAME: {base, predicted, diff}}}'
    )
    from goblueprint.cli._simulate_common import add_cpus_option, add_kernel_option

    add_kernel_option(parser)
    add_cpus_option(parser)


def predict(prog: object, consts: object, settings: dict[str, str], seeds: int, procs: int = 0) -> dict:
    from goblueprint.errors import UsageError
    from goblueprint.model import api, measure, policies

    if seeds < 1:
        raise UsageError("--seeds must be at least 1")
    changed = consts.with_knobs(settings)  # type: ignore[attr-defined]
    pol = policies.resolve([])
    sums: dict[str, dict[str, float]] = {
        "base": dict.fromkeys(METRICS, 0.0),
        "predicted": dict.fromkeys(METRICS, 0.0),
    }
    for seed in range(1, seeds + 1):
        for side, c in (("base", consts), ("predicted", changed)):
            got = measure.of_sim(api.simulate(prog, c, pol, procs=procs, seed=seed, decisions=False))  # type: ignore[arg-type]
            got["preemptions"] = got["sysmon_preemptions"]  # the lab counts sysmon's (sysmon_preempt records)
            for m in METRICS:
                sums[side][m] += float(got[m])
    metrics = {}
    for m in METRICS:
        base, pred = sums["base"][m] / seeds, sums["predicted"][m] / seeds
        metrics[m] = {"base": base, "predicted": pred, "diff": pred - base}
    return {"knobs": dict(sorted(settings.items())), "seeds": seeds, "metrics": metrics}


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.cli._simulate_common import check_procs, load_trace_program, set_cpus
    from goblueprint.errors import UsageError
    from goblueprint.lab import knobs
    from goblueprint.model.constants import from_source
    from goblueprint.source import facts

    check_procs(args.procs)
    if not args.knob:
        raise UsageError("no --knob given: nothing to predict")
    settings = knobs.parse_settings(args.knob, knobs.read(facts.resolve(go=args.go)))
    _, prog = load_trace_program(args.trace, args.kernel)
    set_cpus(prog, args.cpus)
    out = predict(prog, from_source(args.go), settings, args.seeds, args.procs)
    if args.json:
        sys.stdout.write(json.dumps(out, sort_keys=True, indent=2) + "\n")
        return 0
    print(f"knobs: {', '.join(f'{k}={v}' for k, v in out['knobs'].items())}; {out['seeds']} seeds per side")
    print(f"{'metric':<22} {'base':>14} {'predicted':>14} {'diff':>14}")
    for name, m in out["metrics"].items():
        print(f"{name:<22} {m['base']:>14.6g} {m['predicted']:>14.6g} {m['diff']:>14.6g}")
    return 0
