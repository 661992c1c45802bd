"""Progress for long parses: a rich bar on stderr when stderr is a terminal, else nothing.

Usage::

    with byte_progress(total=len(data), label="reading trace") as advance:
        for ... in ...:
            advance(position)          # absolute byte position, cheap to call often

Nothing is printed when stderr is not a terminal (pipes, CI, tests), so command
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


def _noop(position: int) -> None:
    return None


def enabled(stream: TextIO | None = None) -> bool:
    stream = sys.stderr if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or replaced stream
        return False


@contextmanager
def byte_progress(
    total: int, label: str = "reading", *, stream: TextIO | None = None
) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(position)``; shows a transient bar only on a terminal."""
    stream = sys.stderr if stream is None else stream
    if total <= 0 or not enabled(stream):
        yield _noop
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(file=stream), transient=True, auto_refresh=False) as bar:
        task = bar.add_task(label, total=total)
        last = 0.0

        def advance(position: int) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= _MIN_INTERVAL:
                last = now
                bar.update(task, completed=min(position, total), refresh=True)

        yield advance
        bar.update(task, completed=total, refresh=True)
