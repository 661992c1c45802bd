"""Quick throughput figure of the trace reader (not a test: run it by hand).

    .venv/bin/python tests/trace_core/throughput.py TRACE [--decoder python|numba] [--strings]

Iterates every event of TRACE with goblueprint's Reader (and, with --strings,
formats each as `trace dump` does) and prints events, MB, wall and CPU seconds,
MB/s and events/s.  Go's figure for the same file: ../shared/tools/go-reference-parse TRACE.
"""

from __future__ import annotations

import argparse
import os
import resource
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--decoder", choices=["python", "numba"])
    ap.add_argument("--strings", action="store_true", help="also build each event's -d=parsed text")
    args = ap.parse_args()
    if args.decoder:
        os.environ["GOBLUEPRINT_DECODER"] = args.decoder
    from goblueprint.trace.reader import open_trace

    size = os.path.getsize(args.trace)
    wall, cpu = time.perf_counter(), time.process_time()
    n = 0
    for ev in open_trace(args.trace):
        if args.strings:
            ev.string()
        n += 1
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    mb = size / 1e6
    print(
        f"events={n} MB={mb:.2f} wall={wall:.2f}s cpu={cpu:.2f}s "
        f"MBps(wall)={mb / wall:.2f} MBps(cpu)={mb / cpu:.2f} events/s(cpu)={n / cpu:,.0f} maxrss={rss:.0f}MiB"
    )


if __name__ == "__main__":
    main()
