"""Items of an iterator made one ahead on a thread of their own, while the caller uses the one before.

The counterpart of ``write_behind``: reading a Parquet batch (polars lets go of the GIL) or
ordering the next chunk of a trace's events (compiled loops without the GIL) overlaps the work
done with the previous one, for one more item in memory.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")
_DONE = object()


def read_ahead(items: Iterator[T]) -> Iterator[T]:
    """ITEMS as they come, the next one made on a thread of its own meanwhile.  Memory is one
    more item: the thread makes an item only once the one before is taken.  An error of ITEMS
    is raised where it came, after the items made before it.  Stopping early (an error
    downstream) stops the thread and closes ITEMS."""
    ready: queue.SimpleQueue = queue.SimpleQueue()
    taken = threading.Semaphore(1)
    stop = threading.Event()

    def produce() -> None:
        try:
            while True:
                taken.acquire()
                if stop.is_set():
                    return
                item = next(items, _DONE)
                ready.put(item)
                if item is _DONE:
                    return
        except BaseException as exc:  # handed to the consumer, which raises it
            ready.put(exc)

    thread = threading.Thread(target=produce, name="read-ahead", daemon=True)
    thread.start()
    try:
        while (item := ready.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            taken.release()
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        taken.release()
        thread.join()
        close = getattr(items, "close", None)
        if close is not None:
            close()
