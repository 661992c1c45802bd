"""The same real traces fed whole and followed by trailing garbage.

Whole: SUCCESS, with as many events as Go's reader yields.  With garbage after
the last byte: Go's verdict and event count, a TraceError (never another
exception), and the `trace check` CLI saying FAILURE with exit status 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goblueprint.cli import main

from .test_fuzz import assert_agrees_with_go

pytestmark = pytest.mark.slow


def _garbage(whole: bytes) -> dict[str, bytes]:
    header_end = whole.index(b"trace\x00\x00\x00") + 8
    first_batch = whole[header_end : header_end + 64]
    return {
        "one-zero-byte": b"\x00",
        "zeros": bytes(32),
        "ones": b"\xff" * 32,
        "text": b"this is not a trace\n",
        "second-header": whole[:header_end],
        "batch-prefix": first_batch,
        "copy-of-the-trace": whole[header_end:],
    }


TRACES = [pytest.param("small", "1.27", id="small-1.27"), pytest.param("small", "1.22", id="small-1.22")]


@pytest.mark.parametrize(("prog", "go"), TRACES)
def test_whole_then_trailing_garbage(prog, go, small_trace, gohelper, tmp_path: Path, capsys):
    trace = small_trace(go)
    whole = trace.read_bytes()
    count, error = assert_agrees_with_go(whole, tmp_path / "whole.trace", gohelper)
    assert error is None and count > 100
    assert main(["trace", "check", str(trace)]) == 0
    assert capsys.readouterr().out == "SUCCESS\n"
    for name, tail in _garbage(whole).items():
        path = tmp_path / f"{name}.trace"
        n, err = assert_agrees_with_go(whole + tail, path, gohelper)
        if err is None:
            # Go accepts this tail (e.g. a full second copy of a generation): so must we.
            assert n >= count, name
            continue
        if go != "1.22":
            # Go 1.26+ traces close each generation explicitly, so garbage after the
            # last one cannot take the events before it down too. (A 1.22 trace
            # has no such marker: a tail that looks like a batch of the last
            # generation joins it, and Go then fails before yielding it.)
            assert n >= count, (name, n, count)
        assert main(["trace", "check", str(path)]) == 1, name
        assert capsys.readouterr().out.startswith('FAILURE "'), name
