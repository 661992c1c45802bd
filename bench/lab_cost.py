"""What the lab's instrumentation costs: the project's workload built plain and built
against the lab runtime, run alternately, each run traced the same way (capture).

Usage: .venv/bin/python bench/lab_cost.py [--runs 5] [--go 1.27] [--scale 1] [--procs N]

Prints per run the wall time of the program (meta.json wall_s: the process alone,
not the build) and, for lab runs, the records written; then the median slowdown
(lab / plain) and the record rate (records per second of the lab run's wall time).
Both sides are built once before timing (builds are cached by content).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path

from goblueprint.capture.run import capture
from goblueprint.lab import records
from goblueprint.lab.observe import observe

WORKLOAD = Path(__file__).resolve().parent.parent / "goblueprint" / "capture" / "workload"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--go", default=None)
    parser.add_argument("--scale", default="1")
    parser.add_argument("--procs", type=int, default=None)
    args = parser.parse_args()
    command = [".", "-scale", args.scale]
    plain_walls, lab_walls, rates = [], [], []
    with tempfile.TemporaryDirectory(prefix="lab-cost-") as tmp:
        base = Path(tmp)
        # Warm both builds so that no timed run pays a compile.
        capture(command, base / "warm-plain", go=args.go, schedtrace_ms=0, cwd=WORKLOAD,
                stdout=subprocess.DEVNULL)  # fmt: skip
        observe(command, base / "warm-lab", go=args.go, cwd=WORKLOAD, stdout=subprocess.DEVNULL)  # type: ignore[arg-type]
        for i in range(args.runs):
            for side in ("plain", "lab") if i % 2 == 0 else ("lab", "plain"):
                out = base / f"{side}{i}"
                if side == "plain":
                    res = capture(command, out, go=args.go, schedtrace_ms=0, procs=args.procs, cwd=WORKLOAD,
                                  stdout=subprocess.DEVNULL)  # fmt: skip
                    wall = res.meta["wall_s"]
                    plain_walls.append(wall)
                    print(f"run {i} plain: {wall:.3f} s")
                else:
                    obs = observe(command, out, go=args.go, procs=args.procs, cwd=WORKLOAD,
                                  stdout=subprocess.DEVNULL)  # type: ignore[arg-type]  # fmt: skip
                    wall = obs.capture.meta["wall_s"]
                    _table, dump = records.load(out)
                    n = len(dump.records)
                    lab_walls.append(wall)
                    rates.append(n / wall)
                    print(f"run {i} lab:   {wall:.3f} s, {n} records ({dump.overflow} dropped)")
    slow = statistics.median(lab_walls) / statistics.median(plain_walls)
    print(
        f"median wall: plain {statistics.median(plain_walls):.3f} s, lab {statistics.median(lab_walls):.3f} s"
    )
    print(f"slowdown (lab / plain, medians): {slow:.3f}x")
    print(f"record rate: median {statistics.median(rates) / 1e6:.2f} M records/s of wall time")


if __name__ == "__main__":
    main()
