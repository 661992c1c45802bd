"""Strings as Go prints them (%q of raw bytes): invalid UTF-8, control and non-printable runes."""

from __future__ import annotations

import pytest

from goblueprint.trace import spec
from goblueprint.trace.wire import uvarint as _uv

from .conftest import our_parsed, run_cli

NASTY = [
    b"plain",
    "caf\u00e9 \u4e16\u754c \U0001f600".encode(),
    b'quote " backslash \\ tab \t newline \n bell \x07 nul \x00 del \x7f',
    b"invalid \xff \xfe and truncated \xe2\x82 and surrogate \xed\xa0\x80",
    "nbsp \u00a0 zwsp \u200b soft hyphen \u00ad private \ue000 bom \ufeff".encode(),
    b"",
]


def _batch(gen: int, m: int, payload: bytes) -> bytes:
    return bytes([spec.EV_EVENT_BATCH]) + _uv(gen) + _uv(m) + _uv(0) + _uv(len(payload)) + payload


def _ev(typ: int, *args: int) -> bytes:
    return bytes([typ]) + b"".join(_uv(a) for a in args)


def nasty_trace() -> bytes:
    """A Go 1.22 trace whose goroutine logs every string of NASTY (as category and message)."""
    events = _ev(spec.EV_PROC_STATUS, 1, 0, spec.PROC_RUNNING)
    events += _ev(spec.EV_GO_STATUS, 1, 1, 0, spec.GO_RUNNING)
    for i in range(len(NASTY)):
        events += _ev(spec.EV_USER_LOG, 1, 0, i + 1, len(NASTY) - i, 0)
        events += _ev(spec.EV_GO_LABEL, 1, i + 1)
    strings = bytes([spec.EV_STRINGS]) + b"".join(
        bytes([spec.EV_STRING]) + _uv(i + 1) + _uv(len(s)) + s for i, s in enumerate(NASTY)
    )
    no_thread = (1 << 64) - 1
    return (
        spec.header(spec.GO122)
        + _batch(1, 0, events)
        + _batch(1, no_thread, _ev(spec.EV_FREQUENCY, 15625000))
        + _batch(1, no_thread, bytes([spec.EV_STACKS]))
        + _batch(1, no_thread, strings)
    )


@pytest.mark.slow
def test_quoting_matches_go(go_parsed, tmp_path):
    path = tmp_path / "nasty.trace"
    path.write_bytes(nasty_trace())
    want = go_parsed(path)
    assert want.error is None, want.error
    assert b"\\xff" in want.text  # Go escapes the invalid byte: the case is really exercised
    assert our_parsed(path.read_bytes()).text == want.text
    cli = run_cli("trace", "dump", str(path))
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == want.text
