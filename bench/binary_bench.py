"""Speed of the binary blueprints on a ~2 MB Go binary, cold and warm cache.

Builds tests/binary/goprogs/hello with the bundled Go (cached), then times, in
fresh processes: symbols, layout runtime.g, disasm runtime.schedule and calls,
first with an empty cache (GOBLUEPRINT_CACHE pointed at a new directory) and
then again with the cache that run left behind.

    .venv/bin/python bench/binary_bench.py [--go 1.27] [--arch amd64] [--repeat 3]

With --agreement it instead prints, per release and architecture, how many
struct fields agree with gdb's `ptype /o` (name, offset, size) and how many
call sites agree with `go tool objdump -s` (same oracles as tests/binary).
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

COMMANDS = {
    "symbols": ["symbols", "{bin}", "--json"],
    "layout runtime.g": ["layout", "{bin}", "runtime.g", "--json"],
    "layout --expand runtime.m": ["layout", "{bin}", "runtime.m", "--expand", "--json"],
    "disasm runtime.schedule": ["disasm", "{bin}", "runtime.schedule", "--json"],
    "calls runtime.findRunnable": ["calls", "{bin}", "runtime.findRunnable", "--json"],
}


CPU: list[float] = []  # CPU seconds (user+sys) of the last timed child, less sensitive to machine load


def timed(argv: list[str], env: dict[str, str]) -> float:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "goblueprint", "binary", *argv], env=env, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def agreement() -> None:
    import re

    from _testbuilds import tests_module

    from goblueprint import toolchain
    from goblueprint.binary.disasm import calls, disassemble
    from goblueprint.binary.layout import layout
    from goblueprint.binary.session import open_all

    binary_tests = tests_module("tests.binary.conftest")
    ARCHES, RELEASES, build, gdb_batch = (
        binary_tests.ARCHES,
        binary_tests.RELEASES,
        binary_tests.build,
        binary_tests.gdb_batch,
    )
    oracles = tests_module("tests.binary.test_oracles")
    FUNCS, TYPES, parse_ptype = oracles.FUNCS, oracles.TYPES, oracles.parse_ptype

    call_re = re.compile(r"^\s+\S+:\d+\s+0x([0-9a-f]+)\s+[0-9a-f]+\s+CALL (\S+?)(?:\(SB\))?\s*$")
    print(f"{'release':<9} {'arch':<6} {'fields = gdb':>14} {'sizes = gdb':>12} {'call sites = objdump':>21}")
    for go in RELEASES:
        tc = toolchain.find(go)
        for arch in ARCHES:
            path = build("hello", go, arch)
            opened = open_all(str(path), warn=False)
            want = parse_ptype(gdb_batch(path, "set language c", *[f"ptype /o struct '{t}'" for t in TYPES]))
            names = sizes = total = 0
            for t in TYPES:
                got = layout(opened.dwarf, t)["fields"]
                ref = want.get(t, {"fields": []})["fields"]
                total += max(len(got), len(ref))
                for f, (name, off, size) in zip(got, ref, strict=False):
                    names += (f["name"], f["offset"]) == (name, off)
                    sizes += (f["name"], f["offset"], f["size"]) == (name, off, size)
            sites_equal = sites_total = 0
            for func in FUNCS:
                out = tc.run(["tool", "objdump", "-s", f"^{re.escape(func)}$", str(path)]).stdout
                ref_sites = {}
                for line in out.splitlines():
                    m = call_re.match(line)
                    if m:
                        target = m.group(2)
                        ref_sites[int(m.group(1), 16)] = None if "(SB)" not in line else target
                rec = calls(disassemble(opened.binary, opened.symbols, opened.dwarf, func))
                mine = {c["address"]: c["target"] for c in rec["calls"]}
                sites_total += len(ref_sites | mine)
                sites_equal += sum(1 for a, t in ref_sites.items() if a in mine and mine[a] == t)
            print(f"{tc.version:<9} {arch:<6} {f'{names}/{total}':>14} {f'{sizes}/{total}':>12} "
                  f"{f'{sites_equal}/{sites_total}':>21}")  # fmt: skip


def main() -> None:
    from _testbuilds import tests_module

    build = tests_module("tests.binary.conftest").build  # cached builds

    ap = argparse.ArgumentParser()
    ap.add_argument("--go", default="1.27")
    ap.add_argument("--arch", default="amd64")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--agreement", action="store_true", help="agreement with gdb and go tool objdump instead")
    args = ap.parse_args()
    if args.agreement:
        agreement()
        return
    binary = build("hello", args.go, args.arch)
    size = binary.stat().st_size
    print(f"binary: {binary} ({size / 1e6:.2f} MB, go {args.go}, {args.arch})")
    base = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import goblueprint.cli"], check=True)
    print(f"python + import goblueprint.cli: {time.perf_counter() - base:.3f} s")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print("medians; wall seconds, with the process's CPU seconds in brackets")
    print(f"{'command':<28} {'cold':>16} {'warm':>16} {'in-process warm':>16}")
    for name, template in COMMANDS.items():
        argv = [a.replace("{bin}", str(binary)) for a in template]
        colds, warms, inproc, cold_cpu, warm_cpu = [], [], [], [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, GOBLUEPRINT_CACHE=cache)
                colds.append(timed(argv, env))
                cold_cpu.append(CPU[-1])
                warms.append(timed(argv, env))
                warm_cpu.append(CPU[-1])
                inproc.append(in_process(argv, cache))
        cold = f"{statistics.median(colds):.2f} ({statistics.median(cold_cpu):.2f})"
        warm = f"{statistics.median(warms):.2f} ({statistics.median(warm_cpu):.2f})"
        print(f"{name:<28} {cold:>16} {warm:>16} {statistics.median(inproc):>16.3f}")


def in_process(argv: list[str], cache: str) -> float:
    """The command's own work with a warm cache, imports (capstone too) already done."""
    import contextlib
    import io

    import capstone  # noqa: F401  (import cost is not the command's work)

    from goblueprint.cli import main as cli_main

    old = os.environ.get("GOBLUEPRINT_CACHE")
    os.environ["GOBLUEPRINT_CACHE"] = cache
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            start = time.perf_counter()
            cli_main(["binary", *argv])
            return time.perf_counter() - start
    finally:
        if old is None:
            del os.environ["GOBLUEPRINT_CACHE"]
        else:
            os.environ["GOBLUEPRINT_CACHE"] = old


if __name__ == "__main__":
    main()
