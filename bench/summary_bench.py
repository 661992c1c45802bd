"""Go's goroutine summary: ours beside Go's own reader and summarizer, on the same traces.

    .venv/bin/python bench/summary_bench.py TRACE... [--repeat 3]

Per trace, each step in a child process of its own (so its peak RSS is its own), the
best of --repeat runs by wall time:

* ``go read``       /work/shared/tools/go-reference-parse (Go's internal/trace reader)
* ``go summary``    tests/timeline/gosummary (Go's reader + internal/trace.Summarizer,
                    JSON output included; built like the tests' Go helpers)
* ``ours read``     run_pass with no consumer (the reader's columns only)
* ``ours summary``  run_pass with the Summarizer, then finalize()

The script runs unchanged against an older checkout (its Summarizer took events one by
one): run it with that checkout's interpreter to get the "before" figures.  Our steps
run in a forked child that has not imported numba: loading the compiled kernel is part
of the figure, its first compilation is not (a warm-up child compiles it beforehand).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GO_READ = Path("/work/shared/tools/go-reference-parse")


def _child(fn: Callable[[], int]) -> tuple[float, float, int]:
    """(wall s, peak RSS MiB, events) of FN run in a forked child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            t = time.perf_counter()
            n = fn()
            wall = time.perf_counter() - t
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            os.write(w, f"{wall} {rss} {n}".encode())
        finally:
            os._exit(0)
    os.close(w)
    out = os.read(r, 200).decode()
    os.close(r)
    os.waitpid(pid, 0)
    wall, rss, n = out.split()
    return float(wall), float(rss), int(n)


def _process(argv: list[str]) -> tuple[float, float, int]:
    """(wall s, peak RSS MiB, 0) of a command, from wait4's rusage."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_maxrss / 1024, 0


def _ours_read(trace: Path) -> int:
    from goblueprint.timeline.source import run_pass

    return run_pass(trace, []).events


def _ours_summary(trace: Path) -> int:
    from goblueprint.timeline.source import run_pass
    from goblueprint.timeline.summary import Summarizer

    s = Summarizer()
    n = run_pass(trace, [s]).events
    s.finalize()
    return n


def _go_summary_binary() -> Path:
    sys.path.insert(0, str(ROOT / "tests" / "timeline"))
    from tl_goref import goref_binary

    return goref_binary(source=ROOT / "tests" / "timeline" / "gosummary" / "main.go", name="gosummary")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("traces", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    gosummary = _go_summary_binary()
    _child(lambda: _ours_summary(args.traces[0]))  # warm-up: compiles or loads the kernels
    print(f"{'trace':<40} {'step':<14} {'wall s':>8} {'peak RSS MiB':>13} {'events':>9}")
    for trace in args.traces:
        steps: dict[str, Callable[[Path], tuple[float, float, int]]] = {
            "go read": lambda t: _process([str(GO_READ), str(t)]),
            "go summary": lambda t: _process([str(gosummary), str(t)]),
            "ours read": lambda t: _child(lambda: _ours_read(t)),
            "ours summary": lambda t: _child(lambda: _ours_summary(t)),
        }
        for step, run in steps.items():
            wall, rss, n = min((run(trace) for _ in range(args.repeat)), key=lambda r: r[0])
            print(f"{trace.name[:40]:<40} {step:<14} {wall:8.2f} {rss:13.0f} {n or '':>9}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
