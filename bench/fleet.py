"""Benchmark: the fleet report over N traces, by backend and workers, beside Go's own reader.

The traces come from the project's workloads (tests/goprogs/sched, tests/timeline/goprogs/gcmix,
tests/trace_check/goprogs/small) under several Go releases and GOMAXPROCS values, made and
cached by the tests' helpers (tests/conftest.py trace_goprog); a run index in the environment
makes each of the N a distinct trace (the ingest cache keys traces by content).

For each configuration (local pool with 1 and 2 workers, a local Dask cluster and a local Ray
when installed) the report is made from scratch: every trace ingested again (``force``), then
``fleet.metrics`` over all of them.  Reported: wall seconds, speed-up over the local pool with
one worker, and the peak RSS of each worker process (its own getrusage, returned by its tasks).
A cluster's start-up is inside its time: it is what ``--ray local`` / ``--dask local`` cost.
In the same run Go's reader (shared/tools/go-reference-parse) reads the N traces one after
another, and its per-trace event counts must equal the report's, or the run is invalid.

    .venv/bin/python bench/fleet.py [--traces 40] [--workers 1,2] [--backends local,dask,ray]
    .venv/bin/python bench/fleet.py --traces 200        # the issue's figure

Prints a table; writes JSON to bench/results/fleet-<UTC time>.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
REFERENCE = ROOT.parent / "shared" / "tools" / "go-reference-parse"
# (program, where its source is); GOMAXPROCS from the environment applies to small and gcmix,
# sched sets its own (its runs differ by the run index only).
WORKLOADS = (
    ("small", ROOT / "tests" / "trace_check" / "goprogs"),
    ("gcmix", ROOT / "tests" / "timeline" / "goprogs"),
    ("sched", ROOT / "tests" / "goprogs"),
)


def produce_traces(n: int, releases: list[str], procs: list[int]) -> list[Path]:
    from _testbuilds import tests_module

    trace_goprog = tests_module("conftest", "give traces of your own with --trace-dir").trace_goprog
    # The workload varies fastest, then the release: a small N still covers every program.
    combos = list(itertools.product(procs, releases, WORKLOADS))
    out = []
    for i in range(n):
        p, go, (prog, root) = combos[i % len(combos)]
        env = {"GOMAXPROCS": str(p), "GOBLUEPRINT_FLEET_RUN": str(i // len(combos))}
        out.append(trace_goprog(prog, go, 1, prog_root=root, env=env))
        print(f"\rtraces: {i + 1}/{n}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def reference_counts(traces: list[Path]) -> tuple[float, dict[str, int]]:
    """Go's reader over every trace, one after another: (wall seconds, events per trace)."""
    from goblueprint import toolchain

    tc = toolchain.find()
    env = dict(os.environ, GO=str(tc.go), GOROOT=str(tc.goroot), GOTOOLCHAIN="local")
    subprocess.run(
        ["bash", str(REFERENCE), str(traces[0])], env=env, capture_output=True, check=True
    )  # build
    start = time.perf_counter()
    proc = subprocess.run(
        ["bash", str(REFERENCE), *map(str, traces)], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    counts = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"(\S+) events=(\d+)", line)
        if m:
            counts[m[1]] = int(m[2])
    return wall, counts


def one_run(traces: list[Path], kind: str, workers: int) -> dict[str, Any]:
    import duckdb

    from goblueprint.fleet import backends, metrics, plan, tables

    names = [str(t) for t in traces]
    backend = backends.Backend(kind, workers, None if kind == "local" else backends.LOCAL)
    done: list[dict[str, Any]] = []
    start = time.perf_counter()
    backends.run([(n, n) for n in names], backend, done.append, force=True)
    ingested = time.perf_counter()
    batch = plan.results(done, names)
    con = duckdb.connect()
    made = tables.register(con, batch, {n: n for n in names})
    report = metrics.compute(con, set(made))
    con.close()
    end = time.perf_counter()
    rss: dict[int, int] = {}
    for r in batch:
        rss[r.pid] = max(rss.get(r.pid, 0), r.max_rss_kb * 1024)
    return {
        "backend": kind,
        "workers": workers,
        "wall_seconds": round(end - start, 3),
        "ingest_seconds": round(ingested - start, 3),
        "report_seconds": round(end - ingested, 3),
        "worker_processes": len(rss),
        "peak_rss_bytes_per_worker": sorted(rss.values(), reverse=True),
        "events": {t["trace"]: t["events"] for t in report["traces"]},
        "failures": report["failures"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--traces", type=int, default=40, help="how many traces (default 40; 200 for the issue)"
    )
    parser.add_argument("--go", default="1.22,1.25,1.27", help="Go releases, comma-separated")
    parser.add_argument("--gomaxprocs", default="1,2,4", help="GOMAXPROCS values, comma-separated")
    parser.add_argument("--workers", default="1,2", help="local pool sizes, comma-separated")
    parser.add_argument(
        "--backends", default="local,dask,ray", help="local, dask, ray (a missing package is skipped)"
    )
    parser.add_argument(
        "--cluster-workers", type=int, default=2, help="workers of the local Dask/Ray cluster"
    )
    args = parser.parse_args(argv)

    traces = produce_traces(args.traces, args.go.split(","), [int(p) for p in args.gomaxprocs.split(",")])
    size = sum(t.stat().st_size for t in traces)
    go_wall, go_counts = reference_counts(traces)
    configs = [("local", int(w)) for w in args.workers.split(",")] if "local" in args.backends else []
    for kind, module in (("dask", "distributed"), ("ray", "ray")):
        if kind in args.backends.split(","):
            if importlib.util.find_spec(module) is None:
                print(f"skipping {kind}: not installed (pip install 'goblueprint[fleet]')", file=sys.stderr)
            else:
                configs.append((kind, args.cluster_workers))
    runs = [one_run(traces, kind, w) for kind, w in configs]
    base = next((r["wall_seconds"] for r in runs if r["backend"] == "local" and r["workers"] == 1), None)
    valid = all(r["events"] == go_counts and not r["failures"] for r in runs)
    result = {
        "traces": len(traces),
        "bytes": size,
        "go_reader_wall_seconds": round(go_wall, 3),
        "runs": [{k: v for k, v in r.items() if k not in ("events", "failures")} for r in runs],
        "counts_agree_with_go": valid,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    print(f"{len(traces)} traces, {size / 1e6:.1f} MB; Go's reader alone, one after another: {go_wall:.2f} s")
    print(
        f"  {'backend':<8} {'workers':>7} {'wall s':>8} {'ingest s':>9} {'report s':>9} {'speed-up':>9}  peak RSS/worker MB"
    )
    for r in runs:
        speed = f"{base / r['wall_seconds']:.2f}" if base else "-"
        peaks = ", ".join(f"{b / 1e6:.0f}" for b in r["peak_rss_bytes_per_worker"])
        print(f"  {r['backend']:<8} {r['workers']:>7} {r['wall_seconds']:>8.2f} {r['ingest_seconds']:>9.2f} "
              f"{r['report_seconds']:>9.2f} {speed:>9}  {peaks}")  # fmt: skip
    print(f"  load average (1 min) at the end: {result['load_average_1min']}")
    if not valid:
        print("  INVALID: event counts differ from Go's reader, or a trace failed", file=sys.stderr)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"fleet-{result['when'].replace(':', '')}.json"
    out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(f"  wrote {out.relative_to(ROOT)}")
    return 0 if valid else 1


if __name__ == "__main__":
    sys.exit(main())
