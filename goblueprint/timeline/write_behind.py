"""Writes that run on a thread of their own while the caller makes the next one's data.

Encoding Parquet (pyarrow's writer, polars' write_parquet) releases the GIL and takes a
third of an ingest: on a thread beside the pass's own work (sorting the next lane kind,
packing the next generation's rows) it costs little wall time.  A given number of writes
are in flight at a time (one unless the data written are held anyway), so what is held
is the data being written and the next, never a queue of them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any


class WriteBehind:
    """``submit(fn, *args)`` runs FN on one of THREADS writer threads once fewer than AHEAD
    calls (THREADS unless given) are in flight (the oldest waited for); an error of a call is
    raised by a later ``submit`` or by ``close`` (a ``with`` block's end).  With one thread the
    calls run in the order submitted (one file's row groups)."""

    def __init__(self, threads: int = 1, ahead: int | None = None) -> None:
        self._ahead = threads if ahead is None else max(ahead, threads)
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="write-behind")
        self._pending: deque[Future[Any]] = deque()

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        while len(self._pending) >= self._ahead:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(fn, *args))

    def wait(self) -> None:
        """Until every call in flight is done (the first error raised here)."""
        while self._pending:
            self._pending.popleft().result()

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
        self._pending.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)  # those queued behind it not begun
