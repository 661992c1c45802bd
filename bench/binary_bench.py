"""Speed of the binary blueprints on a ~2 MB Go binary, cold and warm cache.

Builds tests/binary/goprogs/hello with the bundled Go (cached), then times, in
fresh processes: symbols, layout runtime.g, disasm runtime.schedule and calls,
first with an empty cache (GOBLUEPRINT_CACHE pointed at a new directory) and
then again with the cache that run left behind.

    .venv/bin/python bench/binary_bench.py [--go 1.27] [--arch amd64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "binary"))

COMMANDS = {
    "symbols": ["symbols", "{bin}", "--json"],
    "layout runtime.g": ["layout", "{bin}", "runtime.g", "--json"],
    "layout --expand runtime.m": ["layout", "{bin}", "runtime.m", "--expand", "--json"],
    "disasm runtime.schedule": ["disasm", "{bin}", "runtime.schedule", "--json"],
    "calls runtime.findRunnable": ["calls", "{bin}", "runtime.findRunnable", "--json"],
}


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "goblueprint", "binary", *argv], env=env, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    from conftest import build  # tests/binary/conftest.py: cached builds

    ap = argparse.ArgumentParser()
    ap.add_argument("--go", default="1.27")
    ap.add_argument("--arch", default="amd64")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    binary = build("hello", args.go, args.arch)
    size = binary.stat().st_size
    print(f"binary: {binary} ({size / 1e6:.2f} MB, go {args.go}, {args.arch})")
    base = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import goblueprint.cli"], check=True)
    print(f"python + import goblueprint.cli: {time.perf_counter() - base:.3f} s")
    print(f"{'command':<30} {'cold (s)':>9} {'warm median (s)':>16}")
    for name, template in COMMANDS.items():
        argv = [a.replace("{bin}", str(binary)) for a in template]
        colds, warms = [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, GOBLUEPRINT_CACHE=cache)
                colds.append(timed(argv, env))
                warms.append(timed(argv, env))
        print(f"{name:<30} {statistics.median(colds):>9.3f} {statistics.median(warms):>16.3f}")


if __name__ == "__main__":
    main()
