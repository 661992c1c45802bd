"""Time events_frame (trace -> polars DataFrame) on one trace: wall, CPU, peak RSS, events/s.

Each run is a child process under /usr/bin/time, so the peak RSS is that of a
fresh interpreter doing only this work.

    .venv/bin/python bench/store_frame.py TRACE [--runs N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# The child: build the frame, report its height (events) on stdout.
CHILD = (
    "import sys; from goblueprint.trace.store import events_frame; print(events_frame(sys.argv[1]).height)"
)


def run_once(trace: Path) -> dict:
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        cmd = ["/usr/bin/time", "-o", tf.name, "-f", "%e %U %S %M", sys.executable, "-c", CHILD, str(trace)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.exit(f"store_frame: child failed: {proc.stderr.strip().splitlines()[-1:]}")
        wall, user, sys_, rss_kb = tf.read().split()[-4:]
    events = int(proc.stdout.strip())
    return {
        "events": events,
        "wall_s": float(wall),
        "cpu_s": round(float(user) + float(sys_), 2),
        "peak_rss_mb": round(int(rss_kb) / 1024, 1),
        "events_per_s": round(events / float(wall)) if float(wall) else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    runs = [run_once(args.trace) for _ in range(args.runs)]
    best = min(runs, key=lambda r: r["wall_s"])
    out = {"trace": args.trace.name, "size_mb": round(args.trace.stat().st_size / 2**20, 1), "runs": runs,
           "best": best}  # fmt: skip
    print(json.dumps(out, sort_keys=True, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
