"""Speed of the timeline analyses on a large trace, one consumer at a time and all together.

    .venv/bin/python bench/timeline_model.py [TRACE] [--scale 80] [--go 1.27] [--only read,timeline]

Without TRACE, traces tests/goprogs/big at GOBLUEPRINT_SCALE=SCALE (cached like the
test fixtures).  Reports wall and CPU seconds and events per second for: reading
only, + Go's summarizer, + the timeline builder, + pprof stays, and the whole
one-pass analysis that `trace metrics` runs.  CPU time is reported because the
machine may be shared; compare CPU figures between runs.  Each step runs in a forked
child so its peak RSS (ru_maxrss of that child) is its own, not the largest so far.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("trace", nargs="?", type=Path)
    parser.add_argument("--scale", type=int, default=80)
    parser.add_argument("--go", default="1.27")
    parser.add_argument(
        "--only", default="", help="comma-separated steps: read,summary,timeline,pprof,analyse"
    )
    args = parser.parse_args()
    trace = args.trace
    if trace is None:
        from _testbuilds import trace_goprog  # the tests' cached build-and-trace helpers

        trace = trace_goprog("big", args.go, args.scale)

    from goblueprint.timeline.analysis import analyse
    from goblueprint.timeline.builder import TimelineBuilder
    from goblueprint.timeline.pprof import PROFILE_TYPES, StayCollector
    from goblueprint.timeline.source import run_pass
    from goblueprint.timeline.summary import Summarizer

    size = trace.stat().st_size
    print(f"trace {trace} ({size / 1e6:.1f} MB)")

    only = {s for s in args.only.split(",") if s}
    sys.stdout.flush()

    def timed(step: str, label: str, fn) -> None:
        if only and step not in only:
            return
        pid = os.fork()
        if pid:
            os.waitpid(pid, 0)
            return
        try:
            wall, cpu = time.perf_counter(), time.process_time()
            events = fn()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
            print(
                f"{label:<28} {wall:8.2f} s wall {cpu:8.2f} s cpu  {events / cpu / 1e3:8.1f} k events/cpu-s"
                f"  {rss:7.0f} MiB peak RSS",
                flush=True,
            )
        finally:
            os._exit(0)

    timed("read", "read only", lambda: run_pass(trace, []).events)
    timed("summary", "read + summary", lambda: run_pass(trace, [Summarizer()]).events)

    def builder() -> int:
        b = TimelineBuilder()
        n = run_pass(trace, [b]).events
        b.finish()
        return n

    timed("timeline", "read + timeline", builder)
    timed("pprof", "read + pprof stays", lambda: run_pass(trace, [StayCollector(PROFILE_TYPES)]).events)
    timed(
        "analyse",
        "analyse (metrics pass)",
        lambda: analyse(trace, pprof_types=list(PROFILE_TYPES)).result.events,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
