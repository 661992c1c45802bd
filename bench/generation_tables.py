"""Benchmark: reading every generation's tables (batches indexed, strings, stacks, sync).

Times the loop of ``generation.read_generation`` (or ``read_generation_with_spill``
for Go 1.22-1.25 traces) over a whole trace, in process, after one warm-up pass
(numba's compiled loops load from their cache on first use).  The ordering engine
and the event decoding are not part of it.

    .venv/bin/python bench/generation_tables.py [--trace PATH] [--scale 100] [--repeat 7] [--views]

--views also times building the lazy ``stacks`` / ``pcs`` dict views of every
generation (what a reader that prints stacks pays on top).  Prints one line per
measure; the default trace is tests/goprogs/big at --scale, cached by tests/conftest.py.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def produce_trace(scale: int) -> Path:
    from _testbuilds import trace_goprog  # the tests' cached build-and-trace helpers

    return trace_goprog("big", "1.27", scale)


def read_all(buf: bytes, views: bool = False) -> list:
    from goblueprint.trace import generation, spec, wire

    version, pos = wire.read_header(buf)
    end = len(buf)
    gens = []
    spill = None
    while True:
        if version >= spec.GO126:
            g, pos = generation.read_generation(buf, pos, end, version)
            if g is None:
                break
        else:
            if spill is None and gens:
                break
            g, spill, err, pos = generation.read_generation_with_spill(buf, pos, end, spill, version)
            if err is not None:
                raise SystemExit(f"trace error: {err.message}")
        if views:
            g.table.stacks  # noqa: B018 - building the view is the point
            g.table.pcs  # noqa: B018
        gens.append(g)
    return gens


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, help="use this trace instead of producing one")
    parser.add_argument("--scale", type=int, default=100, help="GOBLUEPRINT_SCALE of tests/goprogs/big")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs; the best is reported")
    parser.add_argument("--views", action="store_true", help="also time building the stacks/pcs views")
    args = parser.parse_args(argv)
    path = args.trace or produce_trace(args.scale)
    buf = path.read_bytes()

    gens = read_all(buf)  # warm-up: numba cache loads, page cache
    # (stacks counted from the dict view on trees older than the array layout, for before/after runs)
    stacks = sum(
        len(g.table.stack_ids if hasattr(g.table, "stack_ids") else g.table.stacks) - 1 for g in gens
    )
    strings = sum(len(g.table.strings) - 1 for g in gens)
    batches = sum(len(v) for g in gens for v in g.batches.values())
    print(
        f"{path.name}: {len(buf) / 1e6:.1f} MB, {len(gens)} generations, {stacks:,} stacks, "
        f"{strings:,} strings, {batches:,} event batches"
    )
    t = best_of(args.repeat, lambda: read_all(buf))
    print(f"generation tables: {t:.4f} s (best of {args.repeat})")
    if args.views:
        tv = best_of(args.repeat, lambda: read_all(buf, views=True))
        print(f"with stacks/pcs views built: {tv:.4f} s (best of {args.repeat})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
