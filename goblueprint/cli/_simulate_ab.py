"""goblueprint simulate ab: two policies on one workload over many seeds, differences with CIs."""

from __future__ import annotations

import argparse

from goblueprint.cli._simulate_common import add_cpus_option

HELP = "compare two policies on a workload over many seeds (difference of means, bootstrap 95% CI)"
METRICS = ("p_utilization", "sched_latency_p50_ns", "sched_latency_p99_ns", "preemptions", "migrations",
           "steals", "sysmon_wakeups", "wall_ns")  # fmt: skip


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workload", metavar="WORKLOAD", help="a workload file or a .trace to replay")
    parser.add_argument("--a", required=True, metavar="POLICY", help="policy names, comma-separated")
    parser.add_argument("--b", required=True, metavar="POLICY", help="policy names, comma-separated")
    parser.add_argument("--seeds", type=int, default=30, metavar="N", help="seeds per side (default 30)")
    parser.add_argument("--procs", type=int, default=0, metavar="N")
    parser.add_argument("--go", metavar="VERSION", help="the release whose source gives the constants")
    parser.add_argument("--json", action="store_true")
    add_cpus_option(parser)


def ab(prog: object, consts: object, a: list[str], b: list[str], seeds: int, procs: int) -> dict:
    import numpy as np

    from goblueprint.errors import UsageError
    from goblueprint.lab.ab import bootstrap_ci, permutation_p
    from goblueprint.model import api, measure, policies

    if seeds < 2:
        raise UsageError("--seeds must be at least 2 (a confidence interval needs spread)")
    sides = {"a": policies.resolve(a), "b": policies.resolve(b)}
    samples: dict[str, dict[str, list[float]]] = {s: {m: [] for m in METRICS} for s in sides}
    for seed in range(1, seeds + 1):
        for side, pol in sides.items():
            got = measure.of_sim(api.simulate(prog, consts, pol, procs=procs, seed=seed, decisions=False))  # type: ignore[arg-type]
            for m in METRICS:
                samples[side][m].append(float(got[m]))
    out: dict = {
        "a": "+".join(sides["a"].names),
        "b": "+".join(sides["b"].names),
        "seeds": seeds,
        "metrics": {},
    }
    for m in METRICS:
        xa, xb = samples["a"][m], samples["b"][m]
        low, high = bootstrap_ci(xa, xb)
        out["metrics"][m] = {"a": float(np.mean(xa)), "b": float(np.mean(xb)), "diff": float(np.mean(xb) - np.mean(xa)),
                             "ci": [low, high], "p": permutation_p(xa, xb)}  # fmt: skip
    return out


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.cli._paths import input_file
    from goblueprint.cli._simulate_common import check_procs, constants, load_trace_program, set_cpus
    from goblueprint.model import workload

    check_procs(args.procs)
    if args.workload.endswith(".trace"):
        _, prog = load_trace_program(args.workload)
    else:
        prog = workload.load(input_file(args.workload))
    set_cpus(prog, args.cpus)
    out = ab(prog, constants(args), args.a.split(","), args.b.split(","), args.seeds, args.procs)
    if args.json:
        sys.stdout.write(json.dumps(out, sort_keys=True, indent=2) + "\n")
        return 0
    print(f"a: {out['a']}  b: {out['b']}  ({out['seeds']} seeds each)")
    from goblueprint.cli._ab_table import print_ab_table

    print_ab_table(out["metrics"], out["seeds"])
    return 0
