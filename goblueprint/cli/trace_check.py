"""goblueprint trace check: validate a trace the way Go's reader does.

A binary trace is read to the end: ``SUCCESS``, or ``FAILURE "<error>"`` at the
first event Go's reader would reject.  A ``.test`` file (Go's txtar golden test:
an expectation plus a text-form trace) is encoded to wire bytes and read the same
way; the exit status then says whether the verdict meets the file's expectation.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from goblueprint.cli._paths import input_file
from goblueprint.errors import PathError, TraceError

HELP = "validate a trace (or a Go .test golden file): SUCCESS or FAILURE with Go's reason"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="binary trace or Go .test (txtar) file")
    parser.epilog = (
        "A trace that breaks part-way is a FAILURE verdict (exit 1): the verdict is the output, "
        "so there is no partial result to accept."
    )


def verdict_of(data: bytes | memoryview) -> TraceError | None:
    """Read a whole wire-format trace; the error Go's reader would stop with, or None."""
    from goblueprint.trace.reader import Reader

    try:
        for _ in Reader(data):
            pass
    except TraceError as exc:
        return exc
    return None


def _looks_like_txtar(path: Path, head: bytes) -> bool:
    if head.startswith(b"go 1."):
        return False
    return path.suffix == ".test" or head.startswith(b"-- ")


def go_quote(text: str) -> str:
    """Go's %q of a string, as the reader's Event.String() quotes (one line of output)."""
    from goblueprint.trace.events import go_quote as quote

    return quote(text)


def check_file(path: Path) -> tuple[str, bool, str | None]:
    """(verdict line, ok, explanation when not ok)."""
    from goblueprint.trace import textform

    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
            if _looks_like_txtar(path, head):
                handle.seek(0)
                golden = textform.parse_test_file(handle.read())
            else:
                golden = None
    except OSError as exc:
        raise PathError.from_os(path, exc) from None
    if golden is None:
        from goblueprint.trace.reader import open_trace

        error = None
        try:
            with open_trace(path) as reader:
                for _ in reader:
                    pass
        except TraceError as exc:
            error = exc
        if error is None:
            return "SUCCESS", True, None
        return f"FAILURE {go_quote(str(error))}", False, None
    error = verdict_of(golden.wire)
    line = "SUCCESS" if error is None else f"FAILURE {go_quote(str(error))}"
    # Go matches the expectation against its error text; ours carries the location in
    # parentheses after the message, so match the bare message (and accept the full one).
    ok = golden.matches(None if error is None else error.message) or (
        error is not None and golden.matches(str(error))
    )
    if ok:
        return line, True, None
    want = "SUCCESS" if not golden.expect_failure else f"FAILURE matching {go_quote(golden.pattern or '')}"
    return line, False, f"{path}: expected {want}"


def run(args: argparse.Namespace) -> int:
    import sys

    status = 0
    many = len(args.files) > 1
    paths = [input_file(name) for name in args.files]  # every path checked before the first verdict
    for name, path in zip(args.files, paths, strict=True):
        line, ok, why = check_file(path)
        print(f"{name}: {line}" if many else line)
        if why:
            print(f"goblueprint: {why}", file=sys.stderr)
        if not ok:
            status = 1
    return status
