"""The data embedded in the HTML page, decoded in Python: exactly the Timeline, safe to embed, deterministic."""

from __future__ import annotations

import base64
import gzip
import json
import re
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
import synth

from goblueprint.render.lanes import arrange, sorted_spans
from goblueprint.render.page_counters import COUNTER_BUCKETS
from goblueprint.render.timeline_html import COUNTER_TITLES, embed_json, render_timeline_html
from goblueprint.timeline.model import STATE_NAMES


def decode(page: str) -> tuple[dict, bytes]:
    head = re.search(r'<script type="application/json" id="gbp-header">(.*?)</script>', page, re.S).group(1)
    blob = re.search(
        r'<script type="application/octet-stream" id="gbp-blob">(.*?)</script>', page, re.S
    ).group(1)
    header = json.loads(head)
    raw = base64.b64decode(blob)
    if header["blob"]["codec"] == "gzip":
        raw = gzip.decompress(raw)
    assert len(raw) == header["blob"]["size"]
    return header, raw


def column(header, raw, table, name, dtype):
    t = header[table]
    return np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<"), count=t["n"], offset=t["arrays"][name])


def check_spans(tl, page):
    """The page's exact spans are the Timeline's spans of those lanes, all of them."""
    header, raw = decode(page)
    lanes = arrange(tl)
    held = [
        (int(lane.kind), lane.lane_id) for lane, h in zip(lanes, header["lanes"], strict=True) if h["exact"]
    ]
    tl = replace(
        tl,
        spans=tl.spans.join(
            pl.DataFrame(held, schema={"lane_kind": pl.UInt8, "lane_id": pl.Int64}, orient="row"),
            on=["lane_kind", "lane_id"],
            maintain_order="left",
        ),
    )
    start = column(header, raw, "spans", "start", "f8")
    end = column(header, raw, "spans", "end", "f8")
    state = column(header, raw, "spans", "state", "u1")
    label = column(header, raw, "spans", "label", "i4")
    got = []
    for lane in header["lanes"]:
        lo, hi = lane["spans"]
        assert np.all(np.diff(start[lo:hi]) >= 0), f"{lane['name']}: starts not sorted"
        for k in range(lo, hi):
            got.append((lane["name"], int(start[k]), int(end[k]), header["states"][state[k]]))
        assert label[lo:hi].min(initial=0) >= 0
    names = {(k, i): n for k, i, n in tl.lanes.select("lane_kind", "lane_id", "label").iter_rows()}
    want = [
        (names.get((k, i)) or "", s - tl.start_ns, e - tl.start_ns, STATE_NAMES[st])
        for k, i, s, e, st in tl.spans.select("lane_kind", "lane_id", "start", "end", "state").iter_rows()
    ]
    # Lanes without a name in the lanes table get a default one; compare those by position only.
    known = {w[0] for w in want}
    got_cmp = sorted((n if n in known else "", s, e, st) for n, s, e, st in got)
    assert got_cmp == sorted(want)
    return header


def test_spans_round_trip(synthetic_timeline):
    header = check_spans(synthetic_timeline, render_timeline_html(synthetic_timeline, "x"))
    assert header["strings"][: len(synthetic_timeline.strings)] == synthetic_timeline.strings
    assert header["flows"]["n"] == synth.drawable_flows(synthetic_timeline)


def test_uncompressed_equals_compressed(synthetic_timeline):
    a = decode(render_timeline_html(synthetic_timeline, "x", compress=False))
    b = decode(render_timeline_html(synthetic_timeline, "x", compress=True))
    assert a[1] == b[1]


def test_deterministic(synthetic_timeline):
    assert render_timeline_html(synthetic_timeline, "x") == render_timeline_html(synthetic_timeline, "x")


def test_embedded_json_cannot_close_the_script(hostile_timeline):
    page = render_timeline_html(hostile_timeline, "</script><script>alert(1)</script>")
    head = re.search(r'id="gbp-header">(.*?)</script>', page, re.S).group(1)
    assert "<" not in head and ">" not in head and "&" not in head
    assert json.loads(head)["title"] == "</script><script>alert(1)</script>"
    assert "<title></script>" not in page
    assert json.loads(embed_json({"s": "\u2028</script>&"})) == {"s": "\u2028</script>&"}


def test_no_network_references(synthetic_timeline):
    page = render_timeline_html(synthetic_timeline, "x")
    assert not re.search(r"(?i)\b(src|href)\s*=", page)
    assert "http://" not in page and "https://" not in page
    assert "default-src 'none'" in page


@pytest.mark.slow
def test_real_trace_round_trip(sched_timeline):
    check_spans(sched_timeline, render_timeline_html(sched_timeline, "sched"))
    counters = decode(render_timeline_html(sched_timeline, "sched"))[0]["counters"]
    # Counters with more samples than the page keeps per counter are thinned (test_levels), the
    # others kept whole; a thinned counter may well end up with fewer samples than a kept one.
    assert pl.Series([c["name"] for c in counters]).is_unique().all()
    strings = sched_timeline.strings
    want = {
        COUNTER_TITLES.get(strings[name], strings[name]): n
        for name, n in sched_timeline.counters.group_by("name").len().iter_rows()
    }
    shown = {c["name"]: c["samples"][1] - c["samples"][0] for c in counters}
    assert shown.keys() == want.keys()
    for name, n in want.items():
        assert shown[name] == n if n <= 2 * COUNTER_BUCKETS else shown[name] <= 2 * COUNTER_BUCKETS, name
    assert any(n > 2 * COUNTER_BUCKETS for n in want.values())  # the trace has a counter to thin


def test_stack_table_holds_the_timelines_frames(sched_timeline):
    header, raw = decode(render_timeline_html(sched_timeline, "sched"))
    st = header["stacks"]

    def arr(name, dtype, n):
        return np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<"), count=n, offset=st["arrays"][name])

    first = arr("first", "u4", st["n"] + 1)
    frame = arr("frame", "u4", int(first[-1]))
    func, file, line = (arr(c, "i4", st["frames"]) for c in ("func", "file", "line"))
    strings = header["strings"]

    def frames(k):
        return [(strings[func[f]], strings[file[f]], int(line[f])) for f in frame[first[k] : first[k + 1]]]

    # Spans that are not runs point at the Timeline's own stack, through the page's table.
    stack = column(header, raw, "spans", "stack", "i4")
    spans = sorted_spans(sched_timeline)
    held = np.zeros(spans.height, dtype=bool)  # the rows of the lanes the page holds exactly
    for lane, h in zip(arrange(sched_timeline, spans), header["lanes"], strict=True):
        held[lane.lo : lane.hi] = h["exact"]
    own = spans["stack"].to_numpy()[held]
    checked = 0
    for k in np.flatnonzero(own > 0)[:: max(1, int((own > 0).sum()) // 300)]:
        assert frames(stack[k]) == sched_timeline.stack(int(own[k]))
        checked += 1
    assert checked > 100
    # Interned: each distinct frame once.
    triples = set(zip(func.tolist(), file.tolist(), line.tolist(), strict=True))
    assert len(triples) == st["frames"]
