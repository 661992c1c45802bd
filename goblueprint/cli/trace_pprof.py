"""goblueprint trace pprof: ``go tool trace -pprof=TYPE``, as a gzipped profile.proto file."""

from __future__ import annotations

import argparse

from goblueprint.cli._ingested import ingested_trace
from goblueprint.cli._partial import add_trace_argument, finish, open_input_trace, progress_of
from goblueprint.cli._paths import output_file, output_format, writing
from goblueprint.cli._show_capture import add_show_capture_flag

HELP = "pprof profile of scheduler/sync/syscall/network waiting, as go tool trace -pprof=TYPE"

TYPES = ("sched", "sync", "syscall", "net")


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_trace_argument(parser, "execution trace file (Go 1.22 or newer)")
    parser.add_argument(
        "--type", required=True, choices=TYPES,
        help="sched: runnable->running delay; sync: blocked on chan/mutex/select; "
        "syscall: time in syscalls; net: blocked on the network",
    )  # fmt: skip
    parser.add_argument("-o", "--output", required=True, metavar="FILE.pb.gz", help="profile to write")
    add_show_capture_flag(parser)


def run(args: argparse.Namespace) -> int:
    from goblueprint.errors import TraceError
    from goblueprint.timeline import pprof

    out = output_file(args.output)
    output_format(
        out, {".pb.gz": "pprof", ".pprof": "pprof", ".pb": "pprof"}, what="a profile", default="pprof",
        hints={"": "go tool pprof -svg/-png/-http draws one"},
    )  # fmt: skip
    if args.show_capture:
        # Capture's own goroutines are left out of the ingested tables: this needs its own pass.
        from goblueprint.timeline.analysis import analyse

        reader = open_input_trace(args.trace)
        with progress_of(args.trace, "analysing") as advance:
            a = analyse(reader, timeline=False, pprof_types=[args.type], show_capture=True, progress=advance)
        profiles, source = a.profiles, reader
    else:
        found = ingested_trace(args.trace)
        profiles, source = found.profiles(), found
    if profiles is None or profiles.goroutines.height == 0:
        # go tool trace fails the same way: no goroutine, no profile.
        raise TraceError("failed to find any goroutine in the trace")
    recs = profiles.records(args.type)
    data = pprof.write_gzip(pprof.build_profile(recs))
    with writing(out):
        out.write_bytes(data)
    total = sum(r.time for r in recs)
    count = sum(r.count for r in recs)
    print(f"{args.output}: {len(recs)} stacks, {count} events, {total} ns")
    # Like go tool trace, the profile keeps only the generations that ended before the failure.
    valid = source.events_read if profiles.valid_events is None else profiles.valid_events
    return finish(source, args, f"the profile covers the {valid} events of the complete generations")
