"""The options shared by the commands that build and run a program (capture, lab observe, lab ab).

Kept apart from goblueprint.kernel and goblueprint.capture so that building the parser
imports nothing heavy.
"""

from __future__ import annotations

import argparse

from goblueprint.errors import UsageError


def add_record_arguments(parser: argparse.ArgumentParser) -> None:
    """--kernel, --locks and --perf of the commands that run a program (capture, lab observe)."""
    parser.add_argument(
        "--kernel", action="store_true", help="also record the kernel scheduler (perf record) on its threads"
    )
    parser.add_argument(
        "--locks", action="store_true", help="with --kernel: also futex and lock contention events"
    )
    parser.add_argument("--perf", metavar="PATH", help="perf binary for --kernel (default: perf on PATH)")


def add_program_arguments(parser: argparse.ArgumentParser, *, each_run: bool = False) -> None:
    """--go, --procs, --timeout and the `-- COMMAND` to build and run."""
    parser.add_argument("--go", metavar="VERSION", help="Go release to build with (default: the bundled one)")
    parser.add_argument("--procs", type=int, metavar="N", help="run with GOMAXPROCS=N")
    which = "each run" if each_run else "the program"
    parser.add_argument("--timeout", type=float, metavar="S", help=f"stop {which} (SIGTERM) after S seconds")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="what to run")


def program_command(args: argparse.Namespace, usage: str) -> list[str]:
    """The COMMAND after `--`; none is a usage error that shows USAGE."""
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError(f"no command: {usage}")
    return command
