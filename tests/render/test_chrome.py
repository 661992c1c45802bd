"""The Chrome trace JSON: valid, one complete event per span, named lanes, paired flows, sorted keys."""

from __future__ import annotations

import io
import json
from collections import Counter

import pytest
from synth import drawable_flows

from goblueprint.timeline.export_chrome import write_chrome


def export(tl) -> tuple[dict, str]:
    buf = io.StringIO()
    n = write_chrome(tl, buf)
    text = buf.getvalue()
    doc = json.loads(text)
    assert len(doc["traceEvents"]) == n
    return doc, text


def check(doc, tl):
    evs = doc["traceEvents"]
    complete = [e for e in evs if e["ph"] == "X"]
    assert len(complete) == tl.spans.height
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in complete)
    named = {(e["pid"], e["tid"]) for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {(e["pid"], e["tid"]) for e in complete} <= named
    starts = Counter(e["id"] for e in evs if e["ph"] == "s")
    finishes = Counter(e["id"] for e in evs if e["ph"] == "f")
    assert starts == finishes and all(c == 1 for c in starts.values())
    return evs


def test_synthetic(hostile_timeline):
    tl = hostile_timeline
    doc, text = export(tl)
    evs = check(doc, tl)
    assert doc["displayTimeUnit"] == "ns"
    # Untrusted strings survive as data (JSON-escaped, never raw markup in the file).
    names = {e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert any("</script>" in n for n in names)
    assert "<" not in text.replace("\\u003c", "") or "</script>" in text  # plain JSON escaping only
    for line in text.splitlines()[1:-1]:
        obj = json.loads(line.rstrip(","))
        assert list(obj) == sorted(obj)
    flows = [e for e in evs if e["ph"] == "s"]
    assert len(flows) == tl.flows.height
    # ts are microseconds since the trace start, with ns kept as fractions.
    first = tl.spans.sort("start").row(0, named=True)
    assert min(e["ts"] for e in evs if e["ph"] == "X") == pytest.approx((first["start"] - tl.start_ns) / 1000)


def test_deterministic(synthetic_timeline):
    assert export(synthetic_timeline)[1] == export(synthetic_timeline)[1]


@pytest.mark.slow
def test_real_trace(sched_timeline):
    doc, _ = export(sched_timeline)
    evs = check(doc, sched_timeline)
    procs = [e for e in evs if e["ph"] == "M" and e["name"] == "process_name"]
    assert {"Procs", "Threads", "Goroutines"} <= {e["args"]["name"] for e in procs}
    assert sum(1 for e in evs if e["ph"] == "C") == sched_timeline.counters.height
    # Every wake-up whose waker is known (a goroutine or a P with a lane) and that ran afterwards.
    assert sum(1 for e in evs if e["ph"] == "s") == drawable_flows(sched_timeline)
