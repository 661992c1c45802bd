"""Benchmark: goblueprint's trace reader against Go's own, on the same >=20 MB trace.

Both sides are timed as whole processes, start-up included:

* ours: ``python -m goblueprint trace stats TRACE --json``
* Go's: ``../shared/tools/go-reference-parse TRACE`` (internal/trace, built once)

Reported: wall seconds (best of --repeat), MB/s, the throughput ratio
Go time / our time (1.0 = as fast as Go), and peak resident memory of our process
above the interpreter's baseline (``python -m goblueprint --version``) divided by the
trace size.  Peak memory comes from wait4()'s rusage of each child alone.  The event
counts of both sides must agree, or the run is reported as invalid.

The trace is produced by tests/goprogs/big (scaled by GOBLUEPRINT_SCALE) with the
cached helpers of tests/conftest.py, unless --trace names one.

    .venv/bin/python bench/trace_read.py [--scale 100] [--repeat 3] [--trace PATH]

Prints a small table; writes JSON to bench/results/trace_read-<UTC time>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
REFERENCE = ROOT.parent / "shared" / "tools" / "go-reference-parse"


# GNU time reports the peak RSS of the command alone.  wait4() on a direct child of this
# process would not: Linux starts a forked child's peak at the parent's RSS and keeps it
# across exec, so every child would seem to need at least what this script holds.
GNU_TIME = Path("/usr/bin/time")


def run_child(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str, str, int, float]:
    """Run CMD to completion: (wall s, peak RSS bytes, stdout, stderr, exit status, CPU s)."""
    report = None
    if GNU_TIME.exists():
        fd, report = tempfile.mkstemp(prefix="trace_read-", suffix=".time")
        os.close(fd)
        cmd = [str(GNU_TIME), "-f", "%M %U %S", "-o", report, *cmd]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    # Read the pipes before reaping so a chatty child cannot block on a full pipe.
    out = proc.stdout.read() if proc.stdout else b""
    err = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    rss = usage.ru_maxrss * 1024
    cpu = usage.ru_utime + usage.ru_stime
    if report is not None:
        fields = Path(report).read_text().split()
        os.unlink(report)
        if len(fields) >= 3:
            rss = int(fields[-3]) * 1024
            cpu = float(fields[-2]) + float(fields[-1])
    return wall, rss, out.decode(), err.decode(), proc.returncode, cpu


def produce_trace(scale: int, env: dict[str, str] | None = None) -> Path:
    from _testbuilds import trace_goprog  # the tests' cached build-and-trace helpers

    return trace_goprog("big", "1.27", scale, env)


def go_env() -> dict[str, str]:
    from goblueprint import toolchain

    tc = toolchain.find()
    return dict(os.environ, GO=str(tc.go), GOROOT=str(tc.goroot), GOTOOLCHAIN="local")


def parse_reference(out: str) -> dict[str, float]:
    fields = {}
    for token in out.split():
        key, eq, value = token.partition("=")
        if eq:
            fields[key] = float(value)
    return fields


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, help="use this trace instead of producing one")
    parser.add_argument("--scale", type=int, default=100, help="GOBLUEPRINT_SCALE of tests/goprogs/big")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side; the best is reported")
    args = parser.parse_args(argv)

    trace = args.trace or produce_trace(args.scale)
    size = trace.stat().st_size
    if size < 20_000_000:
        print(
            f"warning: trace is {size / 1e6:.1f} MB, under the 20 MB the benchmark asks for", file=sys.stderr
        )
    env = go_env()
    ours_cmd = [sys.executable, "-m", "goblueprint", "trace", "stats", str(trace), "--json"]
    base_cmd = [sys.executable, "-m", "goblueprint", "--version"]
    go_cmd = ["bash", str(REFERENCE), str(trace)]

    # Warm-up: builds Go's reference tool once and fills the page cache for both.
    for cmd in (go_cmd, ours_cmd):
        _, _, out, err, code, _ = run_child(cmd, env)
        if code != 0:
            print(f"failed: {' '.join(cmd)}: {err.strip() or out.strip()}", file=sys.stderr)
            return 1

    base_rss = min(run_child(base_cmd, env)[1] for _ in range(args.repeat))
    # Interleaved, so that a change in the machine's speed (shared hosts) hits both sides.
    ours_runs, go_runs = [], []
    for _ in range(args.repeat):
        go_runs.append(run_child(go_cmd, env))
        ours_runs.append(run_child(ours_cmd, env))
    ours_best = min(ours_runs, key=lambda r: r[0])
    go_best = min(go_runs, key=lambda r: r[0])
    ours_stats = json.loads(ours_best[2])
    go_stats = parse_reference(go_best[2].partition(" ")[2])
    ours_peak = max(r[1] for r in ours_runs)

    mode_cmd = [sys.executable, "-c", "from goblueprint.trace import kernels; print(kernels.get().mode)"]
    kernels_mode = run_child(mode_cmd, env)[2].strip()
    result = {
        "kernels": kernels_mode,  # "aot": the ahead-of-time build; "jit": numba's JIT
        "trace": str(trace),
        "bytes": size,
        "events": {"goblueprint": ours_stats.get("events"), "go": int(go_stats.get("events", -1))},
        "counts_agree": ours_stats.get("events") == int(go_stats.get("events", -1)),
        "goblueprint": {
            "wall_seconds": round(ours_best[0], 4),
            "cpu_seconds": round(min(r[5] for r in ours_runs), 4),
            "mb_per_s": round(size / 1e6 / ours_best[0], 2),
            "parse_seconds": ours_stats.get("parse_seconds"),
            "peak_rss_bytes": ours_peak,
            "baseline_rss_bytes": base_rss,
            "rss_above_baseline_per_trace_byte": round((ours_peak - base_rss) / size, 3),
        },
        "go": {
            "wall_seconds": round(go_best[0], 4),
            "cpu_seconds": round(min(r[5] for r in go_runs), 4),
            "mb_per_s": round(size / 1e6 / go_best[0], 2),
            "parse_seconds": go_stats.get("seconds"),
            "peak_rss_bytes": max(r[1] for r in go_runs),
        },
        "throughput_ratio_go_time_over_ours": round(go_best[0] / ours_best[0], 4),
        # CPU time (user + system) is less disturbed by other load on the machine than wall time.
        "cpu_ratio_go_over_ours": round(min(r[5] for r in go_runs) / min(r[5] for r in ours_runs), 4),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "repeat": args.repeat,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "rss_source": "GNU time" if GNU_TIME.exists() else "wait4 (floored at this script's RSS)",
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }

    rows = [
        ("", "goblueprint", "Go internal/trace"),
        ("wall time (s)", f"{ours_best[0]:.3f}", f"{go_best[0]:.3f}"),
        ("CPU time (s)", f"{result['goblueprint']['cpu_seconds']:.3f}", f"{result['go']['cpu_seconds']:.3f}"),
        ("throughput (MB/s)", f"{size / 1e6 / ours_best[0]:.2f}", f"{size / 1e6 / go_best[0]:.2f}"),
        ("events", str(result["events"]["goblueprint"]), str(result["events"]["go"])),
        ("peak RSS (MB)", f"{ours_peak / 1e6:.1f}", f"{result['go']['peak_rss_bytes'] / 1e6:.1f}"),
    ]
    print(f"trace {trace} ({size / 1e6:.1f} MB); compiled loops: {kernels_mode}")
    for row in rows:
        print(f"  {row[0]:<20} {row[1]:>14} {row[2]:>18}")
    print(f"  throughput ratio (Go time / our time): {result['throughput_ratio_go_time_over_ours']}")
    print(f"  CPU time ratio (Go / ours): {result['cpu_ratio_go_over_ours']}")
    print(f"  load average (1 min) at the end: {result['load_average_1min']}")
    print(
        "  our peak RSS above interpreter baseline / trace size: "
        f"{result['goblueprint']['rss_above_baseline_per_trace_byte']}"
    )
    if not result["counts_agree"]:
        print("  INVALID: event counts differ", file=sys.stderr)

    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"trace_read-{result['when'].replace(':', '')}.json"
    out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(f"  wrote {out.relative_to(ROOT)}")
    return 0 if result["counts_agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
