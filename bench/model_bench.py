"""Benchmark: the scheduler model's speed, beside Go's own trace reader on the same trace.

Times, on one >= 20 MB trace of tests/goprogs/big (or --trace):

* Go's reader: ``../shared/tools/go-reference-parse TRACE`` (a whole process), the
  floor for anything that reads the trace;
* ours, in this process: reading it into a Timeline (goblueprint.timeline.analysis),
  deriving the replay Program (goblueprint.model.replay), and simulating it
  (goblueprint.model.api) — the replay's total is the sum;
* the simulation's scheduling decisions per second, on the replay and on the
  declarative example docs/model-examples/workers.toml scaled up with --procs.

    .venv/bin/python bench/model_bench.py [--scale 10] [--trace PATH] [--repeat 2]

Prints a small table; writes JSON to bench/results/model_bench-<UTC time>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from trace_read import REFERENCE, go_env, run_child  # noqa: E402

# In a git worktree the shared tools sit one level further up than trace_read.py looks.
if not REFERENCE.exists() and (ROOT.parent.parent / "shared" / "tools" / REFERENCE.name).exists():
    REFERENCE = ROOT.parent.parent / "shared" / "tools" / REFERENCE.name


def _best(fn, repeat: int):  # type: ignore[no-untyped-def]
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path)
    parser.add_argument(
        "--scale",
        type=int,
        default=10,
        help="rounds of tests/goprogs/big (default 10: 21.6 MB here; the size follows the "
        "machine's speed, the table prints it)",
    )
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    from goblueprint.model import api, policies, replay, workload
    from goblueprint.model.constants import from_source
    from goblueprint.timeline.analysis import analyse

    if args.trace is None:
        from _testbuilds import trace_goprog

        args.trace = trace_goprog("big", "1.27", args.scale)
    size = args.trace.stat().st_size
    consts = from_source()
    go_wall = None
    if REFERENCE.exists():
        run_child(["bash", str(REFERENCE), str(args.trace)], env=go_env())  # builds the tool once
        go_wall = min(
            run_child(["bash", str(REFERENCE), str(args.trace)], env=go_env())[0] for _ in range(args.repeat)
        )
    read_s, a = _best(lambda: analyse(str(args.trace)), 1)
    prog_s, prog = _best(lambda: replay.from_timeline(a.timeline), args.repeat)
    sim_s, res = _best(
        lambda: api.simulate(prog, consts, policies.resolve([]), seed=1, decisions=False), args.repeat
    )
    decisions = res.sim.rec.decision_count
    ex = workload.load(ROOT / "docs" / "model-examples" / "workers.toml")
    ex_s, ex_res = _best(lambda: api.simulate(ex, consts, policies.resolve([]), procs=8, seed=1, decisions=False),
                         args.repeat)  # fmt: skip
    out = {
        "trace": str(args.trace),
        "trace_mb": round(size / 1e6, 2),
        "go_reference_parse_s": round(go_wall, 3) if go_wall is not None else None,
        "read_timeline_s": round(read_s, 3),
        "replay_program_s": round(prog_s, 3),
        "simulate_s": round(sim_s, 3),
        "replay_total_s": round(read_s + prog_s + sim_s, 3),
        "goroutines": len(prog.templates),
        "replay_decisions": decisions,
        "replay_decisions_per_s": round(decisions / sim_s),
        "workers_decisions_per_s": round(ex_res.sim.rec.decision_count / ex_s),
    }
    for k, v in out.items():
        print(f"{k:<26} {v}")
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    (results / f"model_bench-{stamp}.json").write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
