"""Options and loading shared by the simulate actions."""

from __future__ import annotations

import argparse
from typing import Any

from goblueprint.errors import UsageError


def add_model_options(parser: argparse.ArgumentParser, *, policy: bool = True) -> None:
    if policy:
        parser.add_argument("--policy", action="append", default=[], metavar="NAME",
                            help="a policy at its extension points; repeat to combine (see --list-policies)")  # fmt: skip
    parser.add_argument(
        "--procs", type=int, default=0, metavar="N", help="GOMAXPROCS (default: the workload's)"
    )
    parser.add_argument("--seed", type=int, default=1, metavar="N", help="random seed (default 1)")
    parser.add_argument("--go", metavar="VERSION", help="the release whose source gives the constants")


def constants(args: argparse.Namespace) -> Any:
    from goblueprint.model.constants import from_source

    return from_source(args.go)


def add_kernel_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernel", metavar="DIR", help="the trace's `capture --kernel` folder: replay the "
                        "stretches its threads were off their CPUs holding a P (model.osstalls)")  # fmt: skip


def load_trace_program(path: str, kernel: str | None = None) -> tuple[Any, Any]:
    """(the real trace's Timeline, the Program replaying it); errors as goblueprint errors.

    KERNEL: the folder of a kernel recording of the same run (``capture --kernel``), whose
    off-CPU stretches of Ms holding Ps the replay takes as OS stalls.
    """
    from goblueprint.cli._paths import input_file
    from goblueprint.model import replay
    from goblueprint.timeline.analysis import analyse

    a = analyse(str(input_file(path)))
    if a.timeline is None:
        raise UsageError(f"{path}: no timeline could be built")
    if a.result.error is not None:
        # A partial trace would replay as a program that stops part-way: never a silent success.
        raise a.result.error
    stalls = None
    if kernel is not None:
        from goblueprint.model import osstalls

        stalls = osstalls.load(a.timeline, str(input_file(path)), kernel)
    return a.timeline, replay.from_timeline(a.timeline, stalls)


def check_procs(n: int) -> None:
    if n < 0 or n > 4096:
        raise UsageError(f"--procs {n}: expected 1..4096")
