"""The kernel-recording options of the commands that run a program (capture, lab observe).

Kept apart from goblueprint.kernel so that building the parser imports nothing heavy.
"""

from __future__ import annotations

import argparse


def add_record_arguments(parser: argparse.ArgumentParser) -> None:
    """--kernel, --locks and --perf of the commands that run a program (capture, lab observe)."""
    parser.add_argument(
        "--kernel", action="store_true", help="also record the kernel scheduler (perf record) on its threads"
    )
    parser.add_argument(
        "--locks", action="store_true", help="with --kernel: also futex and lock contention events"
    )
    parser.add_argument("--perf", metavar="PATH", help="perf binary for --kernel (default: perf on PATH)")
