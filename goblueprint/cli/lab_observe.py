"""goblueprint lab observe: run a program against an instrumented runtime."""

from __future__ import annotations

import argparse
import sys

from goblueprint.cli._program_args import add_program_arguments, add_record_arguments, program_command

HELP = "build a program against an instrumented runtime and record its scheduler (trace + lab records)"
GROUP_HELP = "the runtime lab: programs built against an instrumented runtime"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o", "--out", default="lab-out", metavar="DIR", help="output folder (default ./lab-out)"
    )
    parser.add_argument(
        "--buffer", type=int, metavar="RECORDS", help="record buffer capacity (default 4194304 records)"
    )
    parser.add_argument(
        "--schedtrace", type=int, default=0, metavar="MS", help="also GODEBUG=schedtrace (ms)"
    )
    add_record_arguments(parser)
    add_program_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from goblueprint.cli._paths import output_dir
    from goblueprint.lab import instrument, observe

    command = program_command(args, "goblueprint lab observe [options] -- COMMAND ...")
    obs = observe.observe(
        command,
        output_dir(args.out),
        go=args.go,
        capacity=args.buffer if args.buffer is not None else instrument.DEFAULT_CAPACITY,
        schedtrace_ms=args.schedtrace,
        procs=args.procs,
        timeout=args.timeout,
        kernel=args.kernel or args.locks,
        locks=args.locks,
        perf=args.perf,
    )
    print(observe.summary(obs))
    if not obs.capture.ok:
        print(
            f"goblueprint: the program failed ({obs.capture.meta['error']}); what was recorded is in {args.out}",
            file=sys.stderr,
        )
        return 1
    return 0
