"""The one rule for a trace that breaks part-way, shared by every command that reads one.

Go's reader yields events until the failure; a command uses exactly those
(the trace is opened with ``partial=True``), writes complete outputs for them,
then prints one line naming the failure (offset, generation) and exits 1, or
0 with ``--allow-partial``, where the line is a warning.  A trace that breaks
before any event but the opening Sync has nothing to show: the reader raises
and the command fails without writing anything.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goblueprint.cli._paths import input_file

if TYPE_CHECKING:
    from goblueprint.trace.reader import Reader

PARTIAL_HELP = (
    "a trace that breaks part-way: use the events Go's reader yields before the failure, "
    "warn on one line and exit 0 (without this flag: the same output, and exit 1)"
)
EPILOG = (
    "A trace that breaks part-way (cut short, corrupt) is used up to the failure, as Go's reader "
    "reads it: the output covers those events, one line names the failure (byte offset, generation) "
    "and the exit status is 1, or 0 with --allow-partial."
)


def add_trace_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    """The TRACE positional and --allow-partial, worded the same in every command."""
    parser.add_argument("trace", metavar="TRACE", help=help_text)
    add_partial_flag(parser)


def add_partial_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-partial", action="store_true", help=PARTIAL_HELP)
    parser.epilog = f"{parser.epilog}\n\n{EPILOG}" if parser.epilog else EPILOG


def open_input_trace(name: str | os.PathLike[str]) -> Reader:
    """The trace file NAME, checked like every input path, opened in partial mode."""
    from goblueprint.trace.reader import open_trace

    return open_trace(input_file(name), partial=True)


def progress_of(name: str | os.PathLike[str], verb: str) -> Any:
    """The progress display of one pass over the trace file NAME (a bar on a terminal, else
    a line per stage for a large trace): ``with progress_of(...) as advance``."""
    from goblueprint.trace.progress import progress

    path = Path(name)
    return progress(f"{verb} {path.name}", unit="events", size=path.stat().st_size)


def finish(reader: Reader, args: argparse.Namespace, covers: str | None = None) -> int:
    """Exit status of a command that has read READER to its end and written its output.

    COVERS says what the output holds when the trace broke (default: the events read).
    """
    from goblueprint.errors import TraceError

    error = reader.error
    if error is None:
        return 0
    # Some of Go's messages carry a stack dump on further lines; one line keeps the first.
    first = error.message.splitlines() or [""]
    error = TraceError(first[0], offset=error.offset, generation=error.generation, m=error.m)
    what = covers or f"the output covers the {reader.events_read} events before it"
    if getattr(args, "allow_partial", False):
        print(f"goblueprint: warning: partial trace: {error}; {what}", file=sys.stderr)
        return 0
    print(f"goblueprint: error: partial trace: {error}; {what} (--allow-partial accepts it)", file=sys.stderr)
    return 1
