"""read_ahead: the items in order, an error where it came, the source closed when stopped early."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from goblueprint.timeline.read_ahead import read_ahead


def test_items_in_order_then_the_error_after_those_before_it() -> None:
    def items() -> Iterator[int]:
        yield from range(5)
        raise ValueError("broken at 5")

    got: list[int] = []
    with pytest.raises(ValueError, match="broken at 5"):
        for item in read_ahead(items()):
            got.append(item)
    assert got == [0, 1, 2, 3, 4]


def test_made_one_ahead_on_another_thread() -> None:
    made: list[tuple[int, str]] = []

    def items() -> Iterator[int]:
        for k in range(3):
            made.append((k, threading.current_thread().name))
            yield k

    it = read_ahead(items())
    assert next(it) == 0
    # The consumer holds item 0: the thread has made item 1 and waits before item 2.
    for _ in range(100):
        if len(made) == 2:
            break
        threading.Event().wait(0.01)
    assert [k for k, _ in made] == [0, 1]
    assert {name for _, name in made} == {"read-ahead"}
    assert list(it) == [1, 2]


def test_stopped_early_stops_the_thread_and_closes_the_source() -> None:
    closed = threading.Event()

    def items() -> Iterator[int]:
        try:
            k = 0
            while True:
                yield k
                k += 1
        finally:
            closed.set()

    it = read_ahead(items())
    assert next(it) == 0
    it.close()
    assert closed.is_set()
    assert not any(t.name == "read-ahead" and t.is_alive() for t in threading.enumerate())
