"""goblueprint trace pprof: ``go tool trace -pprof=TYPE``, as a gzipped profile.proto file."""

from __future__ import annotations

import argparse
import sys

HELP = "pprof profile of scheduler/sync/syscall/network waiting, as go tool trace -pprof=TYPE"

TYPES = ("sched", "sync", "syscall", "net")


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="execution trace file (Go 1.22 or newer)")
    parser.add_argument(
        "--type", required=True, choices=TYPES,
        help="sched: runnable->running delay; sync: blocked on chan/mutex/select; "
        "syscall: time in syscalls; net: blocked on the network",
    )  # fmt: skip
    parser.add_argument("-o", "--output", required=True, metavar="FILE.pb.gz", help="profile to write")
    parser.add_argument(
        "--show-capture",
        action="store_true",
        help="keep the goroutines goblueprint capture added to the program (hidden by default)",
    )


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from goblueprint.errors import TraceError, UsageError
    from goblueprint.timeline import pprof
    from goblueprint.timeline.analysis import analyse

    a = analyse(args.trace, timeline=False, pprof_types=[args.type], show_capture=args.show_capture)
    res = a.result
    if not a.summary.goroutines:
        # go tool trace fails the same way: no goroutine, no profile.
        raise TraceError("failed to find any goroutine in the trace")
    if res.error is not None:
        print(f"goblueprint: warning: {res.error}; profiling the complete generations only", file=sys.stderr)
    stays = a.stays.stays[args.type] if a.stays is not None else []
    valid = res.valid_events if res.error is not None else None
    recs = pprof.records(stays, a.summary, res.valid_last_time, valid)
    data = pprof.write_gzip(pprof.build_profile(recs))
    try:
        Path(args.output).write_bytes(data)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    total = sum(r.time for r in recs)
    count = sum(r.count for r in recs)
    print(f"{args.output}: {len(recs)} stacks, {count} events, {total} ns", file=sys.stderr)
    return 0
