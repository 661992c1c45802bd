"""Time and peak memory from a large trace to its HTML timeline, Perfetto file and Chrome JSON.

    .venv/bin/python bench/timeline_views.py [TRACE] [--scale 100] [--go 1.27] [--views html,perfetto]

Without TRACE, traces tests/goprogs/big at GOBLUEPRINT_SCALE=SCALE (cached like the
test fixtures; scale 100 gives about 30 MB).  Each view runs in a fresh child process,
end to end as the CLI does it (read the trace, build the timeline, render, write), so
its peak RSS is its own.  Reports wall and CPU seconds, peak RSS and output size, plus
the split between building the timeline and rendering it.  CPU time is reported
because the machine may be shared; compare CPU figures between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VIEWS = ("html", "perfetto", "chrome")


def child(view: str, trace: Path, out: Path) -> None:
    """Runs in the child: build, render, write; prints its own phase timings as JSON."""
    from goblueprint.timeline.model import build_timeline

    t0, c0 = time.perf_counter(), time.process_time()
    tl = build_timeline(trace)
    t1, c1 = time.perf_counter(), time.process_time()
    if view == "html":
        from goblueprint.render.timeline_html import render_timeline_html

        out.write_text(render_timeline_html(tl, trace.name), encoding="utf-8")
    elif view == "perfetto":
        from goblueprint.timeline.export_perfetto import write_perfetto

        write_perfetto(tl, out)
    else:
        from goblueprint.timeline.export_chrome import write_chrome

        write_chrome(tl, out)
    t2, c2 = time.perf_counter(), time.process_time()
    print(
        json.dumps(
            {
                "spans": tl.spans.height,
                "flows": tl.flows.height,
                "counters": tl.counters.height,
                "build_wall": t1 - t0,
                "build_cpu": c1 - c0,
                "render_wall": t2 - t1,
                "render_cpu": c2 - c1,
            }
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("trace", nargs="?", type=Path)
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--go", default="1.27")
    parser.add_argument(
        "--views", default=",".join(VIEWS), help="comma-separated subset of " + ",".join(VIEWS)
    )
    parser.add_argument("--keep", type=Path, default=None, help="directory to keep the outputs in")
    parser.add_argument("--child", nargs=3, metavar=("VIEW", "TRACE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return 0
    trace = args.trace
    if trace is None:
        from _testbuilds import trace_goprog  # the tests' cached build-and-trace helpers

        trace = trace_goprog("big", args.go, args.scale)
    print(f"trace {trace} ({trace.stat().st_size / 1e6:.1f} MB), {os.cpu_count()} CPUs")
    outdir = args.keep or Path(tempfile.mkdtemp(prefix="gbp-bench-views-"))
    outdir.mkdir(parents=True, exist_ok=True)
    suffix = {"html": ".html", "perfetto": ".pftrace", "chrome": ".json"}
    for view in args.views.split(","):
        if view not in VIEWS:
            parser.error(f"unknown view {view!r}")
        out = outdir / f"timeline{suffix[view]}"
        wall = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, __file__, "--child", view, str(trace), str(out)],
            stdout=subprocess.PIPE,
            text=True,
        )
        # wait4 gives the child's own resource usage, peak RSS included.
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - wall
        phases = json.loads(proc.stdout.read() or "{}")
        proc.stdout.close()
        if status != 0:
            print(f"{view}: child failed with status {status}")
            return 1
        cpu = usage.ru_utime + usage.ru_stime
        print(
            f"{view:<9} {wall:7.2f} s wall {cpu:7.2f} s cpu  peak RSS {usage.ru_maxrss / 1024:7.0f} MiB"
            f"  output {out.stat().st_size / 1e6:7.1f} MB"
            f"  (build {phases['build_wall']:.2f} s, render+write {phases['render_wall']:.2f} s wall;"
            f" {phases['spans']} spans, {phases['flows']} flows, {phases['counters']} counter samples)"
        )
        if args.keep is None:
            out.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
