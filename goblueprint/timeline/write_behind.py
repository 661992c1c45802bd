"""Writes that run on a thread of their own while the caller makes the next one's data.

Encoding Parquet (pyarrow's writer, polars' write_parquet) releases the GIL and takes a
third of an ingest: on a thread beside the pass's own work (sorting the next lane kind,
packing the next generation's rows) it costs little wall time.  One write is in flight at
a time, so what is held is the data being written and the next, never a queue of them.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any


class WriteBehind:
    """``submit(fn, *args)`` runs FN on the writer thread once the previous call is done; an
    error of a call is raised by the next ``submit`` or by ``close`` (a ``with`` block's end)."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="write-behind")
        self._pending: Future[Any] | None = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        self.wait()
        self._pending = self._pool.submit(fn, *args)

    def wait(self) -> None:
        """Until the call in flight is done (its error raised here)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self) -> None:
        try:
            self.wait()
        finally:
            self._pool.shutdown(wait=True)

    def __enter__(self) -> WriteBehind:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None:
            self.close()
            return
        # Already failing: the write in flight is let finish (its file is closed after it),
        # and the error that got here is the one raised, not a later one of that write.
        self._pending = None
        self._pool.shutdown(wait=True)
