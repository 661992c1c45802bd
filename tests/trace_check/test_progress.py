"""The progress helper draws only on a terminal."""

from __future__ import annotations

import io

from goblueprint.trace.progress import enabled, progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_when_not_a_terminal():
    stream = io.StringIO()
    assert not enabled(stream)
    with progress("reading", total=100, stream=stream) as advance:
        for i in range(0, 101, 10):
            advance(i)
    assert stream.getvalue() == ""


def test_draws_on_a_terminal_with_and_without_total():
    for total, unit in ((1000, "bytes"), (None, "events")):
        stream = _Terminal()
        with progress("reading x.trace", total=total, unit=unit, stream=stream) as advance:
            advance(500)
        shown = stream.getvalue()
        assert "reading x.trace" in shown and ("500" in shown or total is not None), (total, unit)
        assert "/?" not in shown


def test_closed_stream_is_not_a_terminal():
    stream = io.StringIO()
    stream.close()
    assert not enabled(stream)
