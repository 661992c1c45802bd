"""`goblueprint trace dump` against `go tool trace -d=parsed` on real traces of Go 1.22 and 1.27."""

from __future__ import annotations

import pytest

from .conftest import batch_bounds, cut_points, our_parsed, run_cli, same_error

pytestmark = pytest.mark.slow

# Every trace format: 1.22 (go 1.22), 1.23 (go 1.23), 1.25 (go 1.25), 1.26 and 1.27 (go 1.26).
RELEASES = ["1.22", "1.23", "1.25", "1.26", "1.27"]


@pytest.mark.parametrize("go", RELEASES)
def test_cli_dump_is_byte_identical(go, go_trace, go_parsed):
    trace = go_trace("sched", go=go)
    want = go_parsed(trace)
    assert want.error is None, want.error
    got = run_cli("trace", "dump", str(trace))
    assert got.returncode == 0, got.stderr
    assert got.stderr == b""
    assert got.stdout == want.text


@pytest.mark.parametrize("go", RELEASES)
def test_trace_has_the_interesting_events(go, go_trace):
    # Guards the differential test above against a trivially small trace: the
    # scheduler paths this reader must order are really exercised.
    from goblueprint.trace.events import EventKind
    from goblueprint.trace.reader import open_trace

    kinds = set()
    reasons = set()
    for ev in open_trace(go_trace("sched", go=go)):
        kinds.add(ev.kind)
        if ev.kind == EventKind.STATE_TRANSITION:
            reasons.add(ev.state_transition().reason)
    assert {EventKind.SYNC, EventKind.STATE_TRANSITION, EventKind.RANGE_BEGIN, EventKind.REGION_BEGIN,
            EventKind.TASK_BEGIN, EventKind.LOG, EventKind.METRIC} <= kinds  # fmt: skip
    assert "preempted" in reasons


@pytest.mark.parametrize("go", RELEASES)
def test_truncated_traces_fail_like_go(go, go_trace, go_parsed, tmp_path):
    data = go_trace("sched", go=go).read_bytes()
    bounds = set(batch_bounds(data))
    for cut in cut_points(data):
        path = tmp_path / f"cut-{cut}.trace"
        path.write_bytes(data[:cut])
        want = go_parsed(path)
        got = our_parsed(data[:cut])
        assert got.text == want.text, f"cut at {cut}"
        assert same_error(got.error, want.error), f"cut at {cut}"
        if 16 < cut < len(data) and cut not in bounds:  # cut at a batch boundary: may be a clean end
            assert want.error is not None, f"Go accepted a trace cut at {cut}"


@pytest.mark.parametrize("go", RELEASES)
def test_truncated_trace_cli(go, go_trace, go_parsed, tmp_path):
    data = go_trace("sched", go=go).read_bytes()
    path = tmp_path / "half.trace"
    path.write_bytes(data[: len(data) // 2])
    want = go_parsed(path)
    got = run_cli("trace", "dump", str(path))
    assert got.returncode == 1
    assert got.stdout == want.text
    err = got.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("goblueprint: error: ")
    assert want.error.splitlines()[0] in err
