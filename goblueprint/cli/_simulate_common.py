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


def load_trace_program(path: str) -> tuple[Any, Any]:
    """(the real trace's Timeline, the Program replaying it); errors as goblueprint errors."""
    from goblueprint.cli._paths import input_file
    from goblueprint.model import replay
    from goblueprint.timeline.analysis import analyse

    a = analyse(str(input_file(path)))
    if a.timeline is None:
        raise UsageError(f"{path}: no timeline could be built")
    if a.result.error is not None:
        # A partial trace would replay as a program that stops part-way: never a silent success.
        raise a.result.error
    return a.timeline, replay.from_timeline(a.timeline)


def check_procs(n: int) -> None:
    if n < 0 or n > 4096:
        raise UsageError(f"--procs {n}: expected 1..4096")
