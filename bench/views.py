"""Benchmark: every trace view as a whole process, beside Go's own tools, in one run.

On one >= 30 MB trace of the project's workload (tests/goprogs/big run for --scale rounds,
cached like the test fixtures) or --trace PATH, each command
runs to completion in a fresh process, start-up included:

* ours: ``trace stats``, ``trace pprof --type sched``, ``trace metrics --json``,
  ``trace ingest``, ``trace timeline`` (HTML), ``trace export --format perfetto``,
  ``--format parquet``, ``trace sql "SELECT count(*) FROM events"``; the views that
  read the ingested tables are timed twice: a first run (the trace's tables removed
  from the cache beforehand, so the view ingests) and a second (tables in the cache);
* Go's: ``go tool trace -pprof=sched`` (the bundled Go) and Go's internal/trace
  reader (../shared/tools/go-reference-parse, its built binary run directly).

For each it prints wall seconds (best of --repeat) and the CPU seconds (user + system) of that run
(less swayed than wall time by other processes on a shared machine), the time ratio against Go's
reader and, for every view but stats, against ``go tool trace -pprof=sched`` (Go's time / ours:
1.0 = as fast as Go, above 1 = faster), peak RSS (GNU time, the command's own) and
peak RSS per byte of trace, raw, above the interpreter's baseline
(``python -m goblueprint --version``) and above the command's own fixed cost (the same
command, first or second run alike, on a 0.4 MB trace: the libraries it loads and what it
holds whatever the trace), and the size of what the command wrote
per byte of trace (a file, or the files of an output directory).  ``--src DIR`` runs the goblueprint of
another checkout (PYTHONPATH=DIR), for a before/after comparison in the same
conditions.

    .venv/bin/python bench/views.py [--scale 16] [--repeat 1] [--trace PATH | --few-generations] [--src DIR]
        [--only stats,pprof,...]

Writes JSON to bench/results/views-<UTC time>.json as well.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from trace_read import REFERENCE, RESULTS, go_env, produce_trace, run_child  # noqa: E402

# -P: the working directory (often a checkout) must not shadow the goblueprint that
# PYTHONPATH (--src) names, as ``python -m`` would otherwise put it first on sys.path.
PYTHON = (sys.executable, "-P", "-m")
VIEWS = ("stats", "pprof", "metrics", "ingest", "timeline", "perfetto", "parquet", "sql")
# Views that read the ingested tables: timed on a first run (no tables yet, the view
# ingests) and on a second one (the tables from the cache).
# The runtime's longest generation period: a generation then ends only when its buffers
# fill, so the trace is few large generations (the reader's hard case for memory).
FEW_GENERATIONS = {"GODEBUG": "traceadvanceperiod=2147483647"}
INGESTED = ("ingest", "pprof", "metrics", "timeline", "perfetto", "parquet", "sql")


def our_command(view: str, trace: Path, out: Path) -> list[str]:
    gb = [*PYTHON, "goblueprint", "trace"]
    t = str(trace)
    return {
        "stats": [*gb, "stats", t, "--json"],
        "ingest": [*gb, "ingest", t],
        "pprof": [*gb, "pprof", "--type", "sched", t, "-o", str(out / "sched.pb.gz")],
        "metrics": [*gb, "metrics", t, "--json"],
        "timeline": [*gb, "timeline", t, "-o", str(out / "timeline.html")],
        "perfetto": [*gb, "export", "--format", "perfetto", t, "-o", str(out / "trace.pftrace")],
        "parquet": [*gb, "export", "--format", "parquet", t, "-o", str(out / "parquet")],
        "sql": [*gb, "sql", t, "SELECT count(*) FROM events"],
    }[view]


def output_of(view: str, out: Path) -> Path | None:
    """What a view writes (None: it prints to stdout)."""
    name = {
        "pprof": "sched.pb.gz",
        "timeline": "timeline.html",
        "perfetto": "trace.pftrace",
        "parquet": "parquet",
    }
    return out / name[view] if view in name else None


def written_bytes(path: Path | None) -> int | None:
    if path is None or not path.exists():
        return None
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def reference_script() -> Path:
    """shared/tools/go-reference-parse beside the checkout (or beside its worktree folder)."""
    for d in ROOT.parents:
        path = d / "shared" / "tools" / "go-reference-parse"
        if path.exists():
            return path
    return REFERENCE


def reference_binary(trace: Path) -> Path:
    """Go's reader, built once by its wrapper script; its binary is what gets timed."""
    env = go_env()
    subprocess.run(["bash", str(reference_script()), str(trace)], env=env, check=True, capture_output=True)
    go = env.get("GO") or shutil.which("go") or "go"
    ver = subprocess.run([go, "env", "GOVERSION"], env=env, check=True, capture_output=True, text=True)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "go-reference-parse" / ver.stdout.strip() / "tracebench"


def drop_ingested(trace: Path, env: dict[str, str]) -> None:
    """Remove TRACE's ingested tables, and the levels of detail made from them, from the cache
    the measured checkout uses (if it has any): a first run starts from nothing."""
    code = (
        "import shutil, sys\n"
        "try:\n    from goblueprint.timeline.ingest import content_hash, ingest_root\n"
        "except ImportError:\n    sys.exit(0)\n"
        "key = content_hash(sys.argv[1])\n"
        "shutil.rmtree(ingest_root() / key, ignore_errors=True)\n"
        "try:\n    from goblueprint.timeline.detail_store import store_root\n"
        "except ImportError:\n    sys.exit(0)\n"
        "for entry in store_root().glob(key + '-*'):\n"
        "    shutil.rmtree(entry, ignore_errors=True)\n"
    )
    subprocess.run([sys.executable, "-P", "-c", code, str(trace)], env=env, check=True)


# A small trace (0.4 MB) for each command's fixed cost: what it holds whatever the trace.
SMALL_TRACE = ROOT / "tests" / "timeline" / "golden_builder" / "sched-go1.27.trace.xz"


def fixed_costs(views: list[str], out: Path, env: dict[str, str]) -> dict[tuple[str, bool], int]:
    """Peak RSS of each view on SMALL_TRACE: (view, first run) -> bytes, every way the rows run it."""
    import lzma

    small = out / "small.trace"
    small.write_bytes(lzma.decompress(SMALL_TRACE.read_bytes()))
    drop = lambda: drop_ingested(small, env)  # noqa: E731
    costs = {}
    for v in views:
        firsts = (True, False) if v in INGESTED and v != "ingest" else (v in INGESTED,)
        for first in firsts:
            costs[(v, first)] = best(our_command(v, small, out), 1, env, before=drop if first else None)[1]
    drop()
    return costs


def best(cmd: list[str], repeat: int, env: dict[str, str] | None = None, before=None):
    """(wall, peak RSS, cpu) of the fastest of REPEAT runs (BEFORE runs untimed before each); exits on a failed run."""
    runs = []
    for _ in range(repeat):
        if before is not None:
            before()
        wall, rss, _out, err, code, cpu = run_child(cmd, env)
        if code != 0:
            raise SystemExit(f"failed ({code}): {' '.join(cmd)}\n{err[-2000:]}")
        runs.append((wall, rss, cpu))
    return min(runs)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--scale",
        type=int,
        default=16,
        help="rounds of tests/goprogs/big (default 16). The trace's size follows the machine's "
        "speed, not only the rounds (here x12 gave 24 MB, x16 68 MB, x100 310 MB); the table "
        "prints it",
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--trace", type=Path)
    parser.add_argument(
        "--few-generations",
        action="store_true",
        help="record the workload as a trace of few large generations (GODEBUG=traceadvanceperiod at its maximum)",
    )
    parser.add_argument(
        "--ingest-once",
        action="store_true",
        help="time the ingest once, then every other view only from its tables (for a trace whose "
        "every first run would re-ingest for minutes)",
    )
    parser.add_argument(
        "--no-go-pprof",
        action="store_true",
        help="leave out go tool trace -pprof=sched (it holds the whole trace: ~80x its size)",
    )
    parser.add_argument("--src", type=Path, help="checkout whose goblueprint runs (default: this one)")
    parser.add_argument(
        "--only", default=",".join(VIEWS), help="comma-separated subset of " + ",".join(VIEWS)
    )
    args = parser.parse_args()
    views = args.only.split(",")
    for v in views:
        if v not in VIEWS:
            parser.error(f"unknown view {v!r}")
    if args.ingest_once:
        if "ingest" not in views:
            parser.error("--ingest-once times the ingest: name it in --only")
        views = ["ingest", *(v for v in views if v != "ingest")]  # the others read its tables
    trace = args.trace or produce_trace(args.scale, FEW_GENERATIONS if args.few_generations else None)
    size = trace.stat().st_size
    env = dict(os.environ)
    src = (args.src or ROOT).resolve()
    env["PYTHONPATH"] = str(src)
    genv = go_env()
    go = genv.get("GO") or shutil.which("go") or "go"
    print(f"trace {trace} ({size / 1e6:.1f} MB), goblueprint from {src}, best of {args.repeat}")

    out = Path(tempfile.mkdtemp(prefix="gbp-views-"))
    try:
        _, base_rss, _ = best([*PYTHON, "goblueprint", "--version"], 1, env)
        # Warm-up: builds the compiled kernels of that checkout if needed, fills the page cache.
        best(our_command("stats", trace, out), 1, env)
        ref_wall, ref_rss, ref_cpu = best([str(reference_binary(trace)), str(trace)], args.repeat, genv)
        # Its profile goes to stdout: a shell that execs it redirects that to a file.
        go_pprof = [
            "sh",
            "-c",
            'exec "$0" tool trace -pprof=sched "$1" > "$2"',
            go,
            str(trace),
            str(out / "go.pb"),
        ]
        rows = [("go internal/trace", ref_wall, ref_rss, ref_cpu, None, None)]
        keys: list[tuple[str, bool] | None] = [None]
        gop_wall = None
        if not args.no_go_pprof:
            gop_wall, gop_rss, gop_cpu = best(go_pprof, args.repeat, genv)
            rows.append(("go tool trace -pprof=sched", gop_wall, gop_rss, gop_cpu, None, None))
            keys.append(None)
        if args.ingest_once:
            drop_ingested(trace, env)
        for v in views:
            if v in INGESTED and args.ingest_once:
                if v == "ingest":
                    wall, rss, cpu = best(our_command(v, trace, out), 1, env)
                    rows.append(("ingest (first run)", wall, rss, cpu, gop_wall, None))
                    keys.append((v, True))
                    continue
                wall, rss, cpu = best(our_command(v, trace, out), args.repeat, env)
                rows.append((f"{v} (second run)", wall, rss, cpu, gop_wall, written_bytes(output_of(v, out))))
                keys.append((v, False))
            elif v in INGESTED:
                drop = lambda: drop_ingested(trace, env)  # noqa: E731
                wall, rss, cpu = best(our_command(v, trace, out), args.repeat, env, before=drop)
                rows.append((f"{v} (first run)", wall, rss, cpu, gop_wall, written_bytes(output_of(v, out))))
                keys.append((v, True))
                if v != "ingest":
                    wall, rss, cpu = best(our_command(v, trace, out), args.repeat, env)
                    rows.append(
                        (f"{v} (second run)", wall, rss, cpu, gop_wall, written_bytes(output_of(v, out)))
                    )
                    keys.append((v, False))
            else:
                wall, rss, cpu = best(our_command(v, trace, out), args.repeat, env)
                rows.append(
                    (
                        v,
                        wall,
                        rss,
                        cpu,
                        gop_wall if v in ("pprof", "metrics") else None,
                        written_bytes(output_of(v, out)),
                    )
                )
                keys.append((v, False))
        fixed = fixed_costs(views, out, env)
    finally:
        shutil.rmtree(out, ignore_errors=True)

    print(f"interpreter baseline {base_rss / 1e6:.0f} MB")
    head = f"{'command':<28} {'wall s':>8} {'cpu s':>7} {'Go reader/ours':>15} {'Go pprof/ours':>14} {'peak MB':>8} {'RSS/size':>9} {'above base/size':>16} {'fixed MB':>9} {'above fixed/size':>17} {'out/size':>9}"
    print(head)
    results = []
    for (name, wall, rss, cpu, gop, wrote), key in zip(rows, keys, strict=True):
        ratio = ref_wall / wall
        prow = f"{gop / wall:14.2f}" if gop else f"{'':>14}"
        above = (rss - base_rss) / size
        own = fixed.get(key) if key is not None else None
        frow = f"{own / 1e6:9.0f} {(rss - own) / size:17.2f}" if own is not None else f"{'':>9} {'':>17}"
        orow = f"{wrote / size:9.2f}" if wrote is not None else f"{'':>9}"
        print(
            f"{name:<28} {wall:8.2f} {cpu:7.2f} {ratio:15.2f} {prow} {rss / 1e6:8.0f} {rss / size:9.2f} {above:16.2f} {frow} {orow}"
        )
        results.append(
            {
                "command": name,
                "wall_s": wall,
                "cpu_s": cpu,
                "ratio_go_reader": ratio,
                "ratio_go_pprof": gop / wall if gop else None,
                "peak_rss": rss,
                "rss_per_byte": rss / size,
                "above_baseline_per_byte": above,
                "fixed_rss": own,
                "above_fixed_per_byte": (rss - own) / size if own is not None else None,
                "output_bytes": wrote,
            }
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    doc = {"trace": str(trace), "size": size, "src": str(src), "baseline_rss": base_rss, "results": results}
    (RESULTS / f"views-{stamp}.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
