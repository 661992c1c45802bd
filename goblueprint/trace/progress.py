"""Progress for long parses: a rich bar on stderr when stderr is a terminal, else nothing.

Usage::

    with progress("reading trace", total=len(data), unit="bytes") as advance:
        for ... in ...:
            advance(position)          # absolute amount done; cheap to call often

``total=None`` shows a running count and rate instead of a bar (for streams whose
length in items is unknown, such as events of a trace).

``tally(label, total)`` counts whole items instead (the traces of ``trace batch``):
its ``done(line)`` advances the bar and prints the item's line above it.

When stderr is not a terminal (pipes, CI, tests) a pass over a large trace prints a
line as it starts and as it ends (``size=``), and nothing else is printed, so command
output stays byte-for-byte deterministic.  rich is imported only when a bar is shown.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

# Redrawing is throttled: calls in between cost one clock read and a comparison.
_MIN_INTERVAL = 0.1
# Off a terminal, passes over traces this large (seconds of work) get a line per stage.
STAGE_LINE_BYTES = 16 << 20


def _noop(position: int) -> None:
    return None


def enabled(stream: TextIO | None = None) -> bool:
    stream = sys.stderr if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or replaced stream
        return False


@contextmanager
def progress(
    label: str = "reading",
    *,
    total: int | None = None,
    unit: str = "bytes",
    stream: TextIO | None = None,
    size: int | None = None,
) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(done)``; shows a transient bar only when STREAM (stderr) is a terminal.

    Off a terminal, a pass over SIZE bytes of at least ``STAGE_LINE_BYTES`` (seconds of
    work) prints one line as it starts and one with its duration as it ends, so a log shows
    what a long run is doing; smaller ones stay silent.
    """
    stream = sys.stderr if stream is None else stream
    if not enabled(stream):
        if size is None or size < STAGE_LINE_BYTES:
            yield _noop
            return
        print(f"goblueprint: {label} ({size / 1e6:.1f} MB) ...", file=stream, flush=True)
        start = time.monotonic()
        yield _noop
        print(f"goblueprint: {label}: done in {time.monotonic() - start:.1f} s", file=stream, flush=True)
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    if total is None:
        # Unknown length: a running count, not a bar with "N/?".
        columns = [
            TextColumn("{task.description}"),
            SpinnerColumn(),
            TextColumn("{task.completed:,.0f} " + unit),
            TimeElapsedColumn(),
        ]
    elif unit == "bytes":
        columns = [
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
        ]
    else:
        columns = _count_columns(unit)
    with Progress(*columns, console=Console(file=stream), transient=True, auto_refresh=False) as bar:
        task = bar.add_task(label, total=total)
        last = 0.0

        def advance(done: int) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= _MIN_INTERVAL:
                last = now
                bar.update(task, completed=done if total is None else min(done, total), refresh=True)

        yield advance


@contextmanager
def tally(
    label: str, total: int, *, unit: str = "traces", stream: TextIO | None = None
) -> Iterator[Callable[[str], None]]:
    """Yield ``done(line)``, called once per finished item: on a terminal a bar of TOTAL items
    with each item's LINE printed above it as it finishes; elsewhere nothing, as ``progress``."""
    stream = sys.stderr if stream is None else stream
    if not enabled(stream):
        yield _noop_line
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import Progress

    with Progress(*_count_columns(unit), console=Console(file=stream), transient=True) as bar:
        task = bar.add_task(label, total=total)

        def done(line: str) -> None:
            bar.console.print(escape(line), highlight=False)
            bar.advance(task)

        yield done


def _noop_line(line: str) -> None:
    return None


def _count_columns(unit: str) -> list:
    """A bar of N of TOTAL items (for ``progress`` with a total in items, and ``tally``)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

    return [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeRemainingColumn(),
    ]
