"""Go strings are bytes: a task, region, log or function name that is not UTF-8 must not stop
any view (Arrow, polars and every encoder refuse the lone surrogates the reader keeps such
bytes as, for the dump's sake); each such byte is U+FFFD there, as Go's encoding/json writes it."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from goblueprint.cli import main
from goblueprint.timeline import pprof
from goblueprint.trace import spec
from goblueprint.trace.wire import uvarint as uv

STRINGS = [
    b"main.f\xff",
    b"/x/\xfe.go",
    b"task \xff",
    b"region \xfe",
    b"msg \xff",
    b"cat \xfe",
    b"chan receive",
]
FUNC, FILE, TASK, REGION, MSG, CAT, CHAN = range(1, len(STRINGS) + 1)


def _ev(typ: int, *args: int) -> bytes:
    return bytes([typ]) + b"".join(uv(a) for a in args)


def _batch(m: int, payload: bytes) -> bytes:
    return bytes([spec.EV_EVENT_BATCH]) + uv(1) + uv(m) + uv(0) + uv(len(payload)) + payload


def undecodable_trace() -> bytes:
    """A Go 1.22 trace: G1, in a task and a region, logs, creates G2 (which waits runnable),
    blocks on a channel until G2 wakes it; every string but the block reason, and the one
    stack's function and file, hold a byte that is not UTF-8."""
    events = b"".join([
        _ev(spec.EV_PROC_STATUS, 1, 0, spec.PROC_RUNNING),
        _ev(spec.EV_GO_STATUS, 1, 1, 0, spec.GO_RUNNING),
        _ev(spec.EV_USER_TASK_BEGIN, 1, 1, 0, TASK, 1),
        _ev(spec.EV_USER_REGION_BEGIN, 1, 1, REGION, 1),
        _ev(spec.EV_USER_LOG, 1, 1, CAT, MSG, 1),
        _ev(spec.EV_GO_CREATE, 1, 2, 1, 1),
        _ev(spec.EV_GO_BLOCK, 10, CHAN, 1),
        _ev(spec.EV_GO_START, 10, 2, 1),
        _ev(spec.EV_GO_UNBLOCK, 5, 1, 1, 1),
        _ev(spec.EV_GO_DESTROY, 5),
        _ev(spec.EV_GO_START, 5, 1, 2),
        _ev(spec.EV_USER_REGION_END, 1, 1, REGION, 1),
        _ev(spec.EV_USER_TASK_END, 1, 1, 1),
    ])  # fmt: skip
    stacks = bytes([spec.EV_STACKS]) + _ev(spec.EV_STACK, 1, 1, 0x401000, FUNC, FILE, 7)
    strings = bytes([spec.EV_STRINGS]) + b"".join(
        bytes([spec.EV_STRING]) + uv(i) + uv(len(s)) + s for i, s in enumerate(STRINGS, 1)
    )
    no_thread = (1 << 64) - 1
    return (
        spec.header(spec.GO122)
        + _batch(0, events)
        + _batch(no_thread, _ev(spec.EV_FREQUENCY, 15625000))
        + _batch(no_thread, stacks)
        + _batch(no_thread, strings)
    )


@pytest.fixture
def trace(tmp_path: Path, cache: Path) -> Path:
    path = tmp_path / "undecodable.trace"
    path.write_bytes(undecodable_trace())
    return path


def test_every_view_takes_undecodable_strings(
    trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for fmt, out in [("perfetto", "t.pftrace"), ("chrome", "t.json"), ("parquet", "pq")]:
        assert main(["trace", "export", "--format", fmt, str(trace), "-o", str(tmp_path / out)]) == 0, fmt
    assert main(["trace", "timeline", str(trace), "-o", str(tmp_path / "t.html")]) == 0
    assert main(["trace", "metrics", "--json", str(trace)]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert [t["type"] for t in metrics["tasks"]] == ["task \ufffd"]
    assert "region \ufffd" in [r["type"] for r in metrics["regions"]]
    chrome = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert "main.f\ufffd" in json.dumps(chrome, ensure_ascii=False)

    # The tables hold the text, one U+FFFD per byte.
    db = duckdb.connect()
    pq = tmp_path / "pq"
    logs = db.sql(f"SELECT name, message FROM '{pq}/events.parquet' WHERE kind = 'LOG'").fetchall()
    assert logs == [("cat \ufffd", "msg \ufffd")]
    assert main(["trace", "sql", "--json", str(trace), "SELECT func, file FROM stacks"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"func": "main.f\ufffd", "file": "/x/\ufffd.go"}]

    # The profiles name the function as the tables do; each profile has its sample.
    for typ in ("sched", "sync"):
        out = tmp_path / f"{typ}.pb.gz"
        assert main(["trace", "pprof", "--type", typ, str(trace), "-o", str(out)]) == 0, typ
        assert [s for s, _ in pprof.decode(out.read_bytes()).stacks()] == [("main.f\ufffd",)], typ
