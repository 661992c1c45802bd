"""One pass with a single consumer, per checkout, beside Go's own reader, in the same run.

    .venv/bin/python bench/pass_consumers.py TRACE... [--tree LABEL=PATH ...]
        [--only events,stays,util,summary] [--repeat N]

For each TRACE: ``/work/shared/tools/go-reference-parse`` (Go's internal/trace reading it), then,
per checkout (``--tree``, default this one; e.g. ``--tree main=/work/main`` to compare), a fresh
process per consumer that times ``run_pass`` with only that consumer plus making its result:
``read`` (no consumer), ``events`` (tables.EventRows and its frame), ``stays`` (every pprof type's
StayCollector and its stays table), ``util`` (mmu.UtilCollector of the default flags and its
series), ``summary`` (Go's goroutine summary: summary.Summarizer and its finalize(); beside it
Go's own reader + internal/trace.Summarizer, tests/timeline/gosummary, printing it as JSON).
Each line also gives the process's peak RSS.  The timed span includes importing numba and loading the consumer's compiled kernels (from
numba's cache: run once before to fill it), as a CLI call pays it; ``--warm`` imports numba
and the kernel modules before the clock starts (what a process that has them already pays).  Wall and CPU seconds; the best of N runs.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GO_REFERENCE = Path("/work/shared/tools/go-reference-parse")

# Runs in the checkout under test: both the per-event consumers and the columnar ones.
CHILD = r"""
import sys, time
from goblueprint.trace import kernels
kernels.get()  # the reader's loops, as every pass has them: not what is measured
from goblueprint.timeline.source import run_pass
trace, which, warm = sys.argv[1], sys.argv[2], sys.argv[3] == "warm"
if warm:  # numba and the consumer's kernels imported before the clock starts
    import importlib.util
    for mod in ("numba", "goblueprint.timeline.stay_kernel", "goblueprint.timeline.util_kernel",
                "goblueprint.timeline.summary_kernel"):
        if importlib.util.find_spec(mod) is not None:
            importlib.import_module(mod)
wall, cpu = time.perf_counter(), time.process_time()
if which == "read":
    n = run_pass(trace, []).events
elif which == "events":
    from goblueprint.timeline.tables import EventRows
    try:
        c = EventRows()
    except TypeError:  # the per-event one names stacks by a builder's stack_id
        from goblueprint.timeline.builder import TimelineBuilder
        c = EventRows(TimelineBuilder().stack_id)
    n = run_pass(trace, [c]).events
    rows = c.frame().height
elif which == "stays":
    from goblueprint.timeline.pprof import PROFILE_TYPES, StayCollector
    c = StayCollector(PROFILE_TYPES)
    n = run_pass(trace, [c]).events
    if hasattr(c, "frame"):
        rows = c.frame().height
    else:
        from goblueprint.timeline.builder import TimelineBuilder
        from goblueprint.timeline.pprof import stays_frame
        rows = stays_frame(c, TimelineBuilder().stack_id).height
elif which == "util":
    from goblueprint.timeline.mmu import DEFAULT_FLAGS, UtilCollector
    c = UtilCollector(DEFAULT_FLAGS)
    n = run_pass(trace, [c]).events
    rows = len(c.finish())
elif which == "summary":
    from goblueprint.timeline.summary import Summarizer
    c = Summarizer()
    n = run_pass(trace, [c]).events
    rows = len(c.finalize().goroutines)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
import resource
print(n, wall, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def child(tree: Path, trace: Path, which: str, warm: bool) -> tuple[int, float, float, float]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    mode = "warm" if warm else "cold"
    out = subprocess.run([sys.executable, "-c", CHILD, str(trace), which, mode], env=env, capture_output=True,
                         text=True, check=True, cwd=tree)  # fmt: skip
    n, wall, cpu, rss = out.stdout.split()
    return int(n), float(wall), float(cpu), float(rss)


def _run(argv: list[str], env: dict[str, str] | None = None) -> tuple[str, float, float]:
    """(stdout, wall s, peak RSS MiB) of a command (wait4's rusage: it and its descendants)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # reaped here, for its rusage
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"{argv[0]} failed: {err.read().decode()}")
        return out.read().decode(), wall, usage.ru_maxrss / 1024


def go_reference(trace: Path) -> tuple[int, float, float]:
    from goblueprint import toolchain

    env = dict(os.environ, GO=str(toolchain.find().go))  # the bundled toolchain's go
    out, wall, rss = _run([str(GO_REFERENCE), str(trace)], env)
    found = re.search(r"events=(\d+).*seconds=([\d.]+)", out)
    if found is None:
        raise SystemExit(f"unexpected go-reference-parse output: {out!r}")
    return int(found[1]), min(wall, float(found[2])) if float(found[2]) > 0 else wall, rss


def go_summary(trace: Path) -> tuple[float, float]:
    """(wall s, peak RSS MiB) of Go's reader + Summarizer (tests/timeline/gosummary) on TRACE."""
    sys.path.insert(0, str(ROOT / "tests" / "timeline"))
    from tl_goref import goref_binary

    binary = goref_binary(source=ROOT / "tests" / "timeline" / "gosummary" / "main.go", name="gosummary")
    _, wall, rss = _run([str(binary), str(trace)])
    return wall, rss


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("traces", nargs="+", type=Path)
    parser.add_argument("--tree", action="append", default=[], help="LABEL=PATH of a checkout to time")
    parser.add_argument("--only", default="read,events,stays,util,summary")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--warm", action="store_true", help="import numba and the kernel modules untimed")
    args = parser.parse_args()
    trees = [(t.split("=", 1)[0], Path(t.split("=", 1)[1])) for t in args.tree] or [("this", ROOT)]
    steps = [s for s in args.only.split(",") if s]
    for trace in args.traces:
        size = trace.stat().st_size
        go_events, go_s, go_rss = min((go_reference(trace) for _ in range(args.repeat)), key=lambda r: r[1])
        print(f"{trace.name} ({size / 1e6:.1f} MB, {go_events} events)")
        print(f"  {'go-reference-parse':<22} {go_s:8.2f} s (Go's own reader, its reported seconds)"
              f"  {go_rss:6.0f} MiB peak RSS", flush=True)  # fmt: skip
        if "summary" in steps:
            wall, rss = min((go_summary(trace) for _ in range(args.repeat)), key=lambda r: r[0])
            print(f"  {'go summary':<22} {wall:8.2f} s wall (Go's reader + Summarizer)  {'':22}"
                  f"{rss:6.0f} MiB peak RSS", flush=True)  # fmt: skip
        for which in steps:
            for label, tree in trees:
                n, wall, cpu, rss = min(
                    (child(tree, trace, which, args.warm) for _ in range(args.repeat)), key=lambda r: r[1]
                )
                print(f"  {which + ' @ ' + label:<22} {wall:8.2f} s wall {cpu:8.2f} s cpu  "
                      f"{wall / go_s:6.2f}x Go  {rss:6.0f} MiB peak RSS  {n} events", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
