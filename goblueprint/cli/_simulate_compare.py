"""goblueprint simulate compare: a real trace against the model replaying its work."""

from __future__ import annotations

import argparse

from goblueprint.cli._simulate_common import add_cpus_option, add_kernel_option

HELP = "replay a trace's work on its GOMAXPROCS and report real against simulated metrics"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", required=True, metavar="REAL.trace")
    parser.add_argument("--seed", type=int, default=1, metavar="N")
    parser.add_argument("--go", metavar="VERSION", help="the release whose source gives the constants")
    parser.add_argument("--json", action="store_true", help='print {"real": {...}, "sim": {...}}')
    add_kernel_option(parser)
    add_cpus_option(parser)


def compare(
    trace: str, seed: int, go: str | None, kernel: str | None = None, cpus: int | None = None
) -> dict:
    from goblueprint.cli._simulate_common import load_trace_program, set_cpus
    from goblueprint.model import api, measure, policies
    from goblueprint.model.constants import from_source

    tl, prog = load_trace_program(trace, kernel)
    set_cpus(prog, cpus)
    real = measure.from_timeline(tl, prog.procs)
    consts = from_source(go)
    # Which rules replayed the trace: the model follows its constants' release where the
    # source differs (docs/model.md), and the default is the bundled one, whatever made the trace.
    versions = {"trace_format": tl.go_version, "model": consts.go_version}
    del tl  # measured: the simulation's own timeline takes its place in memory
    result = api.simulate(prog, consts, policies.resolve([]), seed=seed, decisions=False)
    out = {
        "procs": prog.procs,
        "cpus": prog.cpus,
        "go": versions,
        "real": real,
        "sim": measure.of_sim(result),
    }
    if kernel is not None:
        out["os_stalls"] = stall_summary(prog)
    return out


def stall_summary(prog: object) -> dict:
    """What the replay took from the kernel recording: the stalls under running Gs and after them."""
    from goblueprint.model import program as P

    under = [ns for ops in prog.templates for code, ns, _ in ops if code == P.STALL]  # type: ignore[attr-defined]
    after = list(prog.stall_after.values())  # type: ignore[attr-defined]
    return {"under_g": len(under), "under_g_ns": sum(under), "after_g": len(after), "after_g_ns": sum(after)}


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.model.measure import COMPARED

    out = compare(args.trace, args.seed, args.go, args.kernel, args.cpus)
    if args.json:
        sys.stdout.write(json.dumps(out, sort_keys=True, indent=2) + "\n")
        return 0
    print(
        f"GOMAXPROCS {out['procs']}; CPUs {out['cpus'] or 'one per thread'}; "
        f"trace format Go {out['go']['trace_format']}, model Go {out['go']['model']}"
    )
    if "os_stalls" in out:
        st = out["os_stalls"]
        print(f"OS stalls replayed: {st['under_g']} under running Gs ({st['under_g_ns'] / 1e6:.3f} ms), "
              f"{st['after_g']} of Ms holding a P with no G ({st['after_g_ns'] / 1e6:.3f} ms)")  # fmt: skip
    print(f"{'metric':<22} {'real':>14} {'sim':>14}")
    for name in COMPARED:
        print(f"{name:<22} {out['real'][name]:>14.6g} {out['sim'][name]:>14.6g}")
    return 0
