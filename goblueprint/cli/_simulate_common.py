"""Options and loading shared by the simulate actions."""

from __future__ import annotations

import argparse
from pathlib import Path
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
    add_cpus_option(parser)


def add_cpus_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cpus", type=int, default=None, metavar="N",
                        help="the machine's CPUs: a woken thread waits for one while every CPU runs an M "
                        "(docs/model.md, \"The machine's CPUs\"); default: a capture's, from the meta.json "
                        "beside the trace, else 0 (a CPU for every thread)")  # fmt: skip


def set_cpus(prog: Any, cpus: int | None) -> None:
    """--cpus over what the trace's capture said (Program.cpus)."""
    if cpus is None:
        return
    if cpus < 0 or cpus > 4096:
        raise UsageError(f"--cpus {cpus}: expected 0..4096 (0: a CPU for every thread)")
    prog.cpus = cpus


def machine_cpus(trace: Path) -> int:
    """The CPUs of the machine a capture ran on: its meta.json beside the trace (`capture`,
    `lab`), when that names this trace; 0 where none says."""
    import json

    try:
        meta = json.loads((trace.parent / "meta.json").read_text())
    except (OSError, ValueError):
        return 0
    if (
        not isinstance(meta, dict)
        or not isinstance(meta.get("files"), dict)
        or not isinstance(meta.get("host"), dict)
    ):
        return 0
    if meta["files"].get("trace") != trace.name:
        return 0
    n = meta["host"].get("cpus")
    return n if isinstance(n, int) and not isinstance(n, bool) and 0 < n <= 4096 else 0


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

    trace = input_file(path)
    a = analyse(str(trace))
    if a.timeline is None:
        raise UsageError(f"{path}: no timeline could be built")
    if a.result.error is not None:
        # A partial trace would replay as a program that stops part-way: never a silent success.
        raise a.result.error
    stalls = None
    if kernel is not None:
        from goblueprint.model import osstalls

        stalls = osstalls.load(a.timeline, str(trace), kernel)
    prog = replay.from_timeline(a.timeline, stalls)
    prog.cpus = machine_cpus(trace)
    return a.timeline, prog


def check_procs(n: int) -> None:
    if n < 0 or n > 4096:
        raise UsageError(f"--procs {n}: expected 1..4096")
