"""What to build and what to run for the COMMAND given to ``goblueprint capture``.

Splitting ``go test``/``go run`` arguments is pure: it follows the flag tables
of ``go help build`` and ``go help testflag`` below, so that the build step
gets the build flags and the program (or test binary) gets the rest.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from goblueprint.errors import CaptureError

# Build flags of `go help build` that take a value (as -flag value or -flag=value).
BUILD_VALUE_FLAGS = frozenset(
    "C p covermode coverpkg asmflags buildmode compiler gccgoflags gcflags installsuffix ldflags mod "
    "modfile overlay pgo pkgdir tags toolexec exec".split()
)
# Build flags without a value (a "=value" form is accepted too, as go does).
BUILD_BOOL_FLAGS = frozenset(
    "a n race msan asan v work x trimpath linkshared buildvcs cover modcacherw json".split()
)
# `go help testflag`: flags the go command turns into -test.NAME for the test binary.
TEST_VALUE_FLAGS = frozenset(
    "bench benchtime blockprofile blockprofilerate count coverprofile cpu cpuprofile fuzz fuzzminimizetime "
    "fuzztime fuzzcachedir list memprofile memprofilerate mutexprofile mutexprofilefraction outputdir "
    "parallel run shuffle skip timeout trace".split()
)
TEST_BOOL_FLAGS = frozenset("benchmem failfast fullpath short v".split())
# Flags of go test itself that make no sense when goblueprint builds and runs the binary.
TEST_REFUSED = frozenset("c o i exec json trace".split())


@dataclass
class Plan:
    """How one capture goes: an optional build, then one process."""

    kind: str  # "test", "run", "package", "binary"
    command: list[str]  # as the user gave it
    build_flags: list[str] = field(default_factory=list)
    target: list[str] = field(default_factory=list)  # package path, or .go files
    program_args: list[str] = field(default_factory=list)
    binary: Path | None = None  # for kind == "binary"


def split_flag(arg: str) -> tuple[str, str | None]:
    name = arg.lstrip("-")
    if "=" in name:
        key, value = name.split("=", 1)
        return key, value
    return name, None


def _take_build_flag(args: list[str], i: int, out: list[str]) -> int | None:
    """Move the build flag at args[i] (with its value) into out; None if not a build flag."""
    key, value = split_flag(args[i])
    if key in BUILD_BOOL_FLAGS:
        out.append(args[i])
        return i + 1
    if key in BUILD_VALUE_FLAGS:
        if value is not None:
            out.append(args[i])
            return i + 1
        if i + 1 >= len(args):
            raise CaptureError(f"flag {args[i]} needs a value")
        out.extend(args[i : i + 2])
        return i + 2
    return None


def plan_go_run(command: list[str]) -> Plan:
    """`go run [build flags] package|files.go [arguments...]`."""
    args = command[2:]
    plan = Plan("run", command)
    i = 0
    while i < len(args) and args[i].startswith("-"):
        nxt = _take_build_flag(args, i, plan.build_flags)
        if nxt is None:
            raise CaptureError(f"go run: unknown flag {args[i]}")
        i = nxt
    if i >= len(args):
        raise CaptureError("go run: no package or .go files named")
    if args[i].endswith(".go"):
        while i < len(args) and args[i].endswith(".go"):
            plan.target.append(args[i])
            i += 1
    else:
        plan.target.append(args[i])
        i += 1
    plan.program_args = args[i:]
    _refuse(plan.build_flags, {"exec", "json", "n"}, "go run")
    return plan


def plan_go_test(command: list[str]) -> Plan:
    """`go test [flags] [packages] [flags] [-args ...]`: any patterns, as go test takes them."""
    args = command[2:]
    plan = Plan("test", command)
    packages: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-args", "--args"):
            plan.program_args.extend(args[i + 1 :])
            break
        if not arg.startswith("-") or arg == "-":
            packages.append(arg)
            i += 1
            continue
        key, value = split_flag(arg)
        if key == "vet":  # go test's vet step: the build here runs no vet, so nothing to pass on
            i += 1 if value is not None else 2
            continue
        if key in TEST_REFUSED:
            raise CaptureError(
                f"go test: flag -{key} is not supported by capture (goblueprint runs the test binary)"
            )
        # Test flags first: -v means the test binary's -test.v here, not go build -v.
        if key in TEST_BOOL_FLAGS:
            plan.program_args.append(f"-test.{key}" + (f"={value}" if value is not None else ""))
            i += 1
        elif key in TEST_VALUE_FLAGS:
            if value is None:
                if i + 1 >= len(args):
                    raise CaptureError(f"flag {arg} needs a value")
                value = args[i + 1]
                i += 1
            plan.program_args.append(f"-test.{key}={value}")
            i += 1
        elif (nxt := _take_build_flag(args, i, plan.build_flags)) is not None:
            i = nxt
        else:
            # go test hands flags it does not know to the test binary as they are.
            plan.program_args.append(arg)
            i += 1
    plan.target = packages or ["."]
    # go test's -coverprofile also sets -cover: the binary must be built with coverage.
    keys = {split_flag(f)[0] for f in plan.build_flags}
    if any(a.startswith("-test.coverprofile=") for a in plan.program_args) and "cover" not in keys:
        plan.build_flags.append("-cover")
    return plan


def split_chdir(command: list[str], cwd: Path) -> tuple[list[str], Path]:
    """`go run -C DIR …`, `go test -C DIR …` (go takes -C only as the first flag): the command
    without it and the directory it then runs in, as go would change to it first."""
    if len(command) < 3 or os.path.basename(command[0]) != "go" or command[1] not in ("run", "test"):
        return command, cwd
    key, value = split_flag(command[2]) if command[2].startswith("-") else ("", None)
    if key != "C":
        return command, cwd
    rest = command[3:]
    if value is None:
        if not rest:
            raise CaptureError(f"go {command[1]}: flag -C needs a directory")
        value, rest = rest[0], rest[1:]
    target = cwd / value
    if not target.is_dir():
        raise CaptureError(f"go {command[1]} -C {value}: no such directory")
    return [command[0], command[1], *rest], target.resolve()


def plan_command(command: list[str], cwd: Path | None = None) -> Plan:
    """Classify COMMAND; relative paths are taken from CWD (default: the current directory)."""
    if not command:
        raise CaptureError("no command given: goblueprint capture [options] -- COMMAND ...")
    head = command[0]
    if os.path.basename(head) == "go" and not os.path.isdir(head):
        if len(command) < 2:
            raise CaptureError("go: which command? expected go test … or go run …")
        if command[1] == "run":
            return plan_go_run(command)
        if command[1] == "test":
            return plan_go_test(command)
        raise CaptureError(f"go {command[1]}: capture takes go test …, go run …, a main package or a binary")
    path = (cwd or Path.cwd()) / head
    if path.is_dir():
        return Plan("package", command, target=[head], program_args=command[1:])
    if head.endswith(".go") and path.is_file():
        files = []
        for arg in command:
            if not arg.endswith(".go"):
                break
            files.append(arg)
        return Plan("package", command, target=files, program_args=command[len(files) :])
    if path.is_file():
        if not os.access(path, os.X_OK):
            raise CaptureError(f"{head} is not executable")
        return Plan("binary", command, binary=path.resolve(), program_args=command[1:])
    on_path = shutil.which(head) if os.sep not in head else None
    if on_path:
        return Plan("binary", command, binary=Path(on_path).resolve(), program_args=command[1:])
    raise CaptureError(
        f"unknown command {head!r}: expected go test …, go run …, a main package directory, .go files or a binary"
    )


def _refuse(flags: list[str], names: set[str], what: str) -> None:
    for flag in flags:
        key, _ = split_flag(flag)
        if key in names:
            raise CaptureError(f"{what}: flag -{key} is not supported by capture")
