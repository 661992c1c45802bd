"""Benchmark: building the Timeline of a trace, beside Go's own reader, in one run.

For each trace (default: the tests' cached big-go1.27.3 traces, x8 and x100), each
measurement is a fresh process run to completion, start-up included:

* Go's internal/trace reader (../shared/tools/go-reference-parse, built binary);
* ``goblueprint.timeline.builder.build(TRACE)`` of this checkout;
* the same of another checkout with ``--src DIR`` (e.g. /work/main: before/after).

It prints wall seconds (whole process, best of --repeat), the build's own seconds (measured
in the process, imports excluded), peak RSS (GNU time / wait4), and the ratio of Go's
reader time to ours (above 1 = faster than Go's reader).  Kernels come from the cache as in
normal use (run once beforehand so no process compiles).

    .venv/bin/python bench/timeline_build.py [--src CHECKOUT] [--repeat 3] [--reference PATH] [TRACE ...]

Writes JSON to bench/results/timeline_build-<UTC time>.json as well.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from trace_read import REFERENCE, RESULTS, go_env, parse_reference, run_child  # noqa: E402

TRACES = Path.home() / ".cache" / "goblueprint" / "test-traces"
DEFAULT = (
    TRACES / "big-go1.27.3-e44313bfc801da81-x8-6cd05d44c506.trace",
    TRACES / "big-go1.27.3-e44313bfc801da81-x100.trace",
)
# The child: build the Timeline, print the build's own seconds and the table sizes.
CHILD = """
import sys, time
from goblueprint.timeline.builder import build
t = time.perf_counter()
tl = build(sys.argv[1])
print(time.perf_counter() - t, tl.spans.height, tl.flows.height, tl.counters.height, tl.instants.height)
"""


def ours(src: Path, trace: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(src))
    wall, rss, out, err, status, cpu = run_child([sys.executable, "-P", "-c", CHILD, str(trace)], env)
    if status != 0:
        raise SystemExit(f"build failed under {src}:\n{err[-2000:]}")
    build_s, *rows = out.split()
    return {"wall_s": wall, "build_s": float(build_s), "cpu_s": cpu, "rss_mb": rss / 1e6,
            "rows": [int(r) for r in rows]}  # fmt: skip


def reference(trace: Path, tool: Path) -> dict[str, float]:
    wall, rss, out, err, status, cpu = run_child([str(tool), str(trace)], go_env())
    if status != 0:
        raise SystemExit(f"go-reference-parse failed:\n{err[-2000:]}")
    return {"wall_s": wall, "read_s": parse_reference(out)["seconds"], "cpu_s": cpu, "rss_mb": rss / 1e6}


def best(runs: list[dict[str, float]]) -> dict[str, float]:
    return min(runs, key=lambda r: r["wall_s"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=Path)
    parser.add_argument("--src", type=Path, action="append", default=[], help="another checkout to time too")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--reference", type=Path, default=REFERENCE, help="go-reference-parse (Go's reader)")
    args = parser.parse_args()
    traces = args.traces or [p for p in DEFAULT if p.exists()]
    trees = {"this": ROOT, **{str(s): s for s in args.src}}
    for tree in trees.values():  # warm: kernels built or loaded, page cache filled
        ours(tree, traces[0])
    results = []
    for trace in traces:
        size = trace.stat().st_size
        print(f"\n{trace.name} ({size / 1e6:.1f} MB)")
        go = best([reference(trace, args.reference) for _ in range(args.repeat)])
        print(
            f"  {'Go internal/trace reader':<34} {go['wall_s']:7.2f} s wall  {go['rss_mb']:7.0f} MB peak RSS"
        )
        row = {"trace": str(trace), "bytes": size, "go_reader": go}
        rows = None
        for name, tree in trees.items():
            r = best([ours(tree, trace) for _ in range(args.repeat)])
            if rows is not None and r["rows"] != rows:
                raise SystemExit(f"{name}: different table sizes {r['rows']} != {rows}")
            rows = r["rows"]
            label = f"build ({name})"
            print(f"  {label:<34} {r['wall_s']:7.2f} s wall  {r['rss_mb']:7.0f} MB peak RSS"
                  f"  build {r['build_s']:6.2f} s  Go reader / ours {go['wall_s'] / r['wall_s']:5.2f}")  # fmt: skip
            row[name] = r
        results.append(row)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"timeline_build-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\n{out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
