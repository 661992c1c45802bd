"""Levels of detail: the bucket summaries against a direct computation, the page's size
bound on two traces, and the tile server's answers to bad requests."""

from __future__ import annotations

import itertools
import json
import lzma
import threading
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from synth import window_arrows
from test_payload import column, decode

from goblueprint.cli import main
from goblueprint.render import levels as page_levels
from goblueprint.render.lanes import arrange
from goblueprint.render.timeline_html import render_timeline_html
from goblueprint.timeline.detail import (
    COLUMNS,
    FANOUT,
    FULL,
    MAX_LEVELS,
    RUNS_SCHEMA,
    level_columns,
    merge_overlaps,
    plan_levels,
    runs,
)
from goblueprint.timeline.model import build_timeline

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "timeline" / "golden_builder"


def _hand_built() -> pl.DataFrame:
    """Lanes that tile time, leave gaps, start mid-bucket, and a lane of nested, overlapping ranges."""
    rows = [
        # lane 0: back to back, states alternate, spans of 1..250 ns
        *[(0, t, t + d, s) for t, d, s in ((0, 5, 0), (5, 250, 1), (255, 1, 2), (256, 44, 0), (300, 700, 3))],
        # lane 1: gaps between spans, first span late
        (1, 37, 90, 1),
        (1, 130, 131, 2),
        (1, 500, 1000, 1),
        # lane 2: overlapping ranges of two states, one nested in another of its own state
        (2, 10, 900, 0),
        (2, 100, 200, 0),
        (2, 150, 400, 1),
        (2, 380, 990, 1),
        # lane 3: one span only, inside a single bucket at every width used
        (3, 601, 602, 2),
    ]
    return pl.DataFrame(
        rows, schema={"lane": pl.UInt32, "start": pl.Int64, "end": pl.Int64, "state": pl.UInt8}, orient="row"
    )


def _direct(spans: pl.DataFrame, width: int) -> dict[tuple[int, int], dict[int, int]]:
    """(lane, bucket) -> {state: ns of the bucket some span of that state covers}, by enumerating ns."""
    covered: dict[tuple[int, int, int], set[int]] = {}
    for lane, start, end, state in spans.iter_rows():
        for t in range(start, end):
            covered.setdefault((lane, t // width, state), set()).add(t)
    out: dict[tuple[int, int], dict[int, int]] = {}
    for (lane, b, state), ts in covered.items():
        out.setdefault((lane, b), {})[state] = len(ts)
    return out


def _assert_runs_summarise(spans: pl.DataFrame, width: int, overlapping: set[int]) -> None:
    """runs(SPANS, WIDTH) against the direct count: every bucket some span covers, once, with
    a dominant state, the fill of its cover (except in OVERLAPPING lanes, whose states cover
    time twice), and maximal runs."""
    want = _direct(spans, width)
    got = runs(spans, width)
    assert got.sort(["lane", "b0"]).equals(got)
    seen = {}
    for lane, b0, b1, state, fill in got.iter_rows():
        assert b1 > b0
        for b in range(b0, b1):
            assert (lane, b) not in seen, "buckets of a lane are in one run only"
            seen[(lane, b)] = (state, fill)
    assert set(seen) == set(want), "exactly the buckets some span covers"
    for key, per_state in want.items():
        state, fill = seen[key]
        assert per_state.get(state, 0) == max(per_state.values()), (key, per_state, state)
        if key[0] not in overlapping:
            total = min(width, sum(per_state.values()))
            assert fill == (total * FULL + width // 2) // width, (key, per_state, fill)
    # Runs are maximal: neighbours in one lane differ in state or fill, or leave a gap.
    rows = list(got.iter_rows())
    for (lane, _b0, b1, state, fill), (lane2, b0n, _b1n, state2, fill2) in itertools.pairwise(rows):
        if lane == lane2 and b1 == b0n:
            assert (state, fill) != (state2, fill2)


@pytest.mark.parametrize("width", [1, 3, 16, 64, 250, 2000])
def test_runs_are_the_dominant_state_and_fill_of_every_bucket(width):
    _assert_runs_summarise(_hand_built(), width, overlapping={2})


@pytest.mark.parametrize("seed", range(6))
def test_runs_of_random_lanes_are_the_direct_count(seed):
    """Random lanes: even ones tile time with gaps (as a goroutine's states do), odd ones hold
    overlapping ranges of several states, nested and touching."""
    rng = np.random.default_rng(seed)
    rows = []
    for lane in range(8):
        t = int(rng.integers(0, 300))
        for _ in range(int(rng.integers(1, 40))):
            d = int(rng.integers(1, 300))
            if lane % 2 == 0:
                rows.append((lane, t, t + d, int(rng.integers(0, 5))))
                t += d + int(rng.integers(0, 3)) * int(rng.integers(0, 200))
            else:
                s = int(rng.integers(0, 4000))
                rows.append((lane, s, s + d, int(rng.integers(0, 3))))
    # Shuffled rows on odd seeds; on even ones the tiling lanes come in time order, as a lane
    # of the ingested spans table does (a counting sort by state is all they get).
    order = rng.permutation(len(rows)) if seed % 2 else np.arange(len(rows))
    spans = pl.DataFrame([rows[i] for i in order], schema=dict(_hand_built().schema), orient="row")
    for width in (1, 7, 64, 500):
        _assert_runs_summarise(spans, width, overlapping={1, 3, 5, 7})


@pytest.mark.parametrize("seed", range(4))
def test_every_level_at_once_is_each_level_alone(seed):
    """level_columns makes each coarser level from the finer one's buckets, not from the spans
    again: the runs are those of each level's width alone.  Lanes of nested, overlapping and
    touching ranges of three states, from a few ns to many buckets long, and a lane of
    back-to-back spans long enough that the output grows."""
    rng = np.random.default_rng(seed)
    width0, count = 7 * FANOUT**4, 5
    rows = []
    for lane in range(6):
        for _ in range(int(rng.integers(1, 400))):
            s = int(rng.integers(0, 40 * width0))
            d = int(rng.choice([1, 5, 7, 28, 100, 7 * FANOUT**2, 3 * width0, 11 * width0]))
            rows.append((lane, s, s + d, int(rng.integers(0, 3))))
    t = 0
    for _ in range(20_000):
        d = int(rng.integers(1, 12))
        rows.append((6, t, t + d, int(rng.integers(0, 4))))
        t += d + int(rng.integers(0, 2)) * int(rng.integers(0, 9))
    spans = pl.DataFrame(rows, schema=dict(_hand_built().schema), orient="row")
    merged = merge_overlaps(spans)
    got = level_columns([merged[c].to_numpy() for c in ("lane", "start", "end", "state")], width0, count)
    assert len(got) == count
    for v, cols in enumerate(got):
        want = runs(spans, width0 // FANOUT**v)
        assert pl.DataFrame(dict(zip(RUNS_SCHEMA, cols, strict=True)), schema=RUNS_SCHEMA).equals(want), v


def test_a_window_changes_nothing_inside_it():
    spans = _hand_built()
    whole = runs(spans, 16)
    part = runs(spans, 16, window=(10, 40))
    expand = lambda df: {(r[0], b): r[3:] for r in df.iter_rows() for b in range(r[1], r[2])}  # noqa: E731
    inside = {k: v for k, v in expand(whole).items() if 10 <= k[1] < 40}
    assert expand(part) == inside


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 1, 0], [1, 2, 0]])
def test_buckets_covered_whole_by_two_states_go_to_the_first_then_lowest(order):
    """Ranges of one lane covering the same buckets whole: the one starting first keeps them,
    on a tie the lower state (not the longer: a long lane's levels are made a tile of time
    at a time, before its ranges' ends are known) — whatever order the rows come in."""
    rows = [(0, 16, 64, 3), (0, 16, 64, 1), (0, 16, 80, 2)]
    spans = pl.DataFrame([rows[i] for i in order], schema=dict(_hand_built().schema), orient="row")
    got = runs(spans, 16).rows()
    assert got == [(0, 1, 4, 1, FULL), (0, 4, 5, 2, FULL)]
    rows2 = [(0, 16, 64, 3), (0, 16, 64, 1), (0, 0, 40, 2)]
    spans2 = pl.DataFrame([rows2[i] for i in order], schema=dict(_hand_built().schema), orient="row")
    # [0, 40) keeps buckets 0 and 1; of the tied [16, 64) ranges state 1 keeps 2 and 3
    assert runs(spans2, 16).rows() == [(0, 0, 2, 2, FULL), (0, 2, 4, 1, FULL)]


def test_levels_nest_and_stop_at_the_finest_width():
    for duration in (1, 999, 2048 * 1000, 7_000_000_000, 10**15):
        lv = plan_levels(duration, 1000)
        assert -(-duration // lv.width0) <= COLUMNS, "level 0 has at most COLUMNS buckets"
        for k in range(1, lv.count):
            assert lv.width(k - 1) == lv.width(k) * FANOUT
        assert lv.width(lv.count - 1) <= 1000 or lv.count == MAX_LEVELS
        assert lv.count == 1 or lv.width(lv.count - 2) > 1000


def _span_bytes(header: dict) -> int:
    """Bytes of span data in a page: level runs, exact spans, wake-up arrows."""
    runs_ = sum(t["n"] for t in header["detail"]["levels"]) * page_levels.RUN_BYTES
    return runs_ + header["spans"]["n"] * page_levels.SPAN_BYTES + header["flows"]["n"] * 24


@pytest.fixture(scope="module")
def two_timelines():
    # Committed traces: a fresh run of a program differs in size run to run (sched's came out
    # with 0.3 to 1 M spans).
    small, large = (
        build_timeline(lzma.decompress((GOLDEN / f"{name}.trace.xz").read_bytes()))
        for name in ("cpusample-go1.22", "sched-go1.27")
    )
    assert large.spans.height > 10 * small.spans.height
    return small, large


def test_page_size_is_bounded_per_lane_and_level(two_timelines, monkeypatch):
    """With a bound small enough to bind on both traces, each lane and level holds at most the
    bound, and the page's span data stays under lanes * COLUMNS runs + the budget."""
    monkeypatch.setattr(page_levels, "PER_LANE", 64)
    monkeypatch.setattr(page_levels, "BUDGET", 64 * 1024)
    sizes = []
    for tl in two_timelines:
        header, _raw = decode(render_timeline_html(tl, "t"))
        lanes = header["lanes"]
        counts = {k: lane.hi - lane.lo for k, lane in enumerate(arrange(tl))}
        assert any(not lane["exact"] for lane in lanes), "the bound must bind for the test to mean anything"
        for k, lane in enumerate(lanes):
            for level, (lo, hi) in enumerate(lane["levels"]):
                assert hi - lo <= (COLUMNS if level == 0 else 64), (lane["name"], level)
            if lane["exact"]:
                assert lane["spans"][1] - lane["spans"][0] == counts[k] <= 64
            else:
                assert lane["spans"][0] == lane["spans"][1]
        bound = len(lanes) * COLUMNS * page_levels.RUN_BYTES + 64 * 1024
        assert _span_bytes(header) <= bound
        sizes.append(_span_bytes(header))
    # Level 0 is the part that grows with the trace, lane by lane: never with its spans.
    assert sizes[1] < two_timelines[1].spans.height * page_levels.SPAN_BYTES / 20


def test_default_bound_on_a_large_trace(two_timelines):
    tl = two_timelines[1]
    header, _raw = decode(render_timeline_html(tl, "t"))
    assert _span_bytes(header) <= len(header["lanes"]) * COLUMNS * page_levels.RUN_BYTES + page_levels.BUDGET
    assert any(len(lane["levels"]) > 1 for lane in header["lanes"]), "finer levels fit the budget"
    assert header["detail"]["count"] == plan_levels(tl.end_ns - tl.start_ns).count


def test_page_levels_are_the_level_function_over_each_lanes_spans(two_timelines):
    """The page's levels, read from the stored levels (state codes, mapped to display states
    after), equal the level function run directly over each lane's spans in display states."""
    tl = two_timelines[1]
    header, raw = decode(render_timeline_html(tl, "t"))
    lanes = arrange(tl)
    _names, code_to_index = page_levels.state_names()
    inp = (
        page_levels.lane_keys(lanes)
        .join(tl.spans, on=["lane_kind", "lane_id"])
        .select(
            "lane",
            pl.col("start") - tl.start_ns,
            pl.col("end") - tl.start_ns,
            pl.Series(
                code_to_index[
                    tl.spans.join(page_levels.lane_keys(lanes), on=["lane_kind", "lane_id"])[
                        "state"
                    ].to_numpy()
                ]
            ).alias("state"),
        )
    )
    width0 = header["detail"]["width0"]
    checked = 0
    for k, table in enumerate(header["detail"]["levels"]):
        got = {
            name: column({"t": table}, raw, "t", name, dt)
            for name, dt in (("b0", "u4"), ("b1", "u4"), ("state", "u1"), ("fill", "u1"))
        }
        want = runs(inp, width0 // FANOUT**k)
        for lane, ranges in enumerate(header["lanes"]):
            if len(ranges["levels"]) <= k:
                continue
            lo, hi = ranges["levels"][k]
            mine = want.filter(pl.col("lane") == lane)
            assert [got[c][lo:hi].tolist() for c in ("b0", "b1", "state", "fill")] == [
                mine[c].to_list() for c in ("b0", "b1", "state", "fill")
            ], (k, ranges["name"])
            checked += 1
    assert len(header["detail"]["levels"]) > 2 and checked > 2 * len(lanes)


def test_arrows_past_the_budget_are_those_between_exact_lanes(two_timelines, monkeypatch):
    """When all wake-up arrows do not fit what the budget leaves, the page holds exactly the
    Timeline's arrows whose both ends are lanes it holds exactly (computed here row by row)."""
    from goblueprint.timeline.model import LaneKind

    tl = two_timelines[1]
    monkeypatch.setattr(page_levels, "BUDGET", 2**20)
    header, raw = decode(render_timeline_html(tl, "t"))
    assert not header["flows_whole"]
    index = {(int(lane.kind), lane.lane_id): k for k, lane in enumerate(arrange(tl))}
    exact = {k for k, lane in enumerate(header["lanes"]) if lane["exact"]}
    want = []
    for f in tl.flows.filter(pl.col("to_time") >= 0).iter_rows(named=True):
        src = index.get((int(LaneKind.G), f["from_g"]), index.get((int(LaneKind.P), f["from_p"]), -1))
        dst = (
            index.get((int(LaneKind.G), f["g"]), -1)
            if f["g"] >= 0
            else index.get((int(LaneKind.P), f["to_p"]), -1)
        )
        if src in exact and dst in exact:
            want.append((f["from_time"] - tl.start_ns, f["to_time"] - tl.start_ns, src, dst))
    got = zip(
        *(
            column(header, raw, "flows", name, dt)
            for name, dt in (("from", "f8"), ("to", "f8"), ("from_lane", "i4"), ("to_lane", "i4"))
        ),
        strict=True,
    )
    got = [tuple(int(x) for x in row) for row in got]
    assert got == sorted(want, key=lambda row: row[0]) and 0 < len(got) < tl.flows.height


def test_ingested_page_is_the_timeline_page_read_lane_by_lane(tmp_path, monkeypatch):
    """`trace timeline` makes the page from the ingested tables without the Timeline: it reads
    no spans, flows, counters or instants table whole, only the spans of the lanes the page holds exactly, and
    the page is the one made from the whole ingested Timeline in memory, byte for byte."""
    from goblueprint.timeline import detail_store
    from goblueprint.timeline.ingest import Ingested, ingest

    trace = tmp_path / "sched.trace"
    trace.write_bytes(lzma.decompress((GOLDEN / "sched-go1.27.trace.xz").read_bytes()))
    read: list[int] = []
    asked: list[object] = []
    lane_spans, timeline = detail_store.DetailStore.lane_spans, Ingested.timeline

    def counted(self, lanes, **kw):
        got = lane_spans(self, lanes, **kw)
        read.append(got.height)
        return got

    def recorded(self, **kwargs):
        asked.append(kwargs.get("tables"))
        return timeline(self, **kwargs)

    monkeypatch.setattr(detail_store.DetailStore, "lane_spans", counted)
    monkeypatch.setattr(Ingested, "timeline", recorded)
    out = tmp_path / "t.html"
    assert main(["trace", "timeline", str(trace), "-o", str(out)]) == 0
    assert asked and all(
        t is not None and not {"spans", "flows", "counters", "instants"} & set(t) for t in asked
    )
    page = out.read_text(encoding="utf-8")
    header, _raw = decode(page)
    exact = sum(lane["total"] for lane in header["lanes"] if lane["exact"])
    assert sum(read) == exact == header["spans"]["n"]
    tl = timeline(ingest(trace))  # what the page was made from before: the whole Timeline
    assert exact < tl.spans.height / 10, "the page must leave most spans out for this to mean anything"
    assert page == render_timeline_html(tl, trace.name)


# ---------- the tile server ----------


@pytest.fixture(scope="module")
def served(go_trace):
    from goblueprint.render.serve import ViewServer, prepare
    from goblueprint.timeline.ingest import ingest

    view = prepare(ingest(go_trace("sched")), "sched")
    server = ViewServer(view, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def _get(url: str) -> tuple[int, dict | str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            body = r.read().decode()
            return r.status, json.loads(body) if r.headers["Content-Type"] == "application/json" else body
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("lanes=0&from=0&to=10", "give one level="),
        ("lanes=0&from=0&to=10&level=x", "level='x' is not an integer"),
        ("lanes=0&from=0&to=10&level=99", "is not in 0.."),
        ("lanes=0&from=10&to=10&level=0", "0 <= from < to"),
        ("lanes=0&from=-5&to=10&level=0", "0 <= from < to"),
        ("lanes=0&from=99999999999999&to=999999999999999&level=0", "past the trace's end"),
        ("lanes=&from=0&to=10&level=0", "give lanes="),
        ("lanes=1,a&from=0&to=10&level=0", "not a list of integers"),
        ("lanes=100000&from=0&to=10&level=0", "lane indexes run 0.."),
        ("lanes=" + ",".join(map(str, range(300))) + "&from=0&to=10&level=0", "at most 256"),
        ("lanes=0&from=0&to=10&level=0&x=1", "unknown parameter 'x'"),
        ("lanes=0&lanes=1&from=0&to=10&level=0", "give lanes="),
    ],
)
def test_bad_tile_requests_get_400_and_one_line(served, query, says):
    status, body = _get(served.url + "tile?" + query)
    assert status == 400
    assert says in body["error"]
    assert "\n" not in body["error"] and "Traceback" not in body["error"]


def test_unknown_path_is_404(served):
    status, body = _get(served.url + "nope")
    assert status == 404 and all(p in body["error"] for p in ("/tile", "/flows", "/search"))


def test_tiles_are_the_stored_levels_and_the_exact_spans(served, go_trace, monkeypatch):
    """A tile answers exact spans equal to the Timeline's in the window, or the level's runs
    equal to the level function over the Timeline's spans."""
    from goblueprint.render import serve

    view = served.view
    tl = build_timeline(go_trace("sched"))
    origin = tl.start_ns
    lanes = arrange(tl)
    busy = int(np.argmax([lane.hi - lane.lo for lane in lanes]))
    kind, lane_id = int(lanes[busy].kind), lanes[busy].lane_id
    middle = int(
        tl.spans.filter((pl.col("lane_kind") == kind) & (pl.col("lane_id") == lane_id))["start"].median()
    )
    t_from, t_to = middle - origin - 50_000, middle - origin + 50_000
    status, body = _get(served.url + f"tile?lanes={busy}&from={t_from}&to={t_to}&level=3")
    assert status == 200
    (got,) = body["lanes"]
    mine = tl.spans.filter(
        (pl.col("lane_kind") == kind)
        & (pl.col("lane_id") == lane_id)
        & (pl.col("start") < origin + t_to)
        & (pl.col("end") > origin + t_from)
    ).sort(["start", "end"], descending=[False, True])
    assert got["exact"]["start"] == (mine["start"] - origin).to_list()
    assert got["exact"]["end"] == (mine["end"] - origin).to_list()
    assert len(mine) > 5
    # Few spans allowed per lane: the same lane and window answer with the level's runs.
    monkeypatch.setattr(serve, "EXACT_LIMIT", 5)
    status, body = _get(served.url + f"tile?lanes={busy}&from={t_from}&to={t_to}&level=3")
    (got,) = body["lanes"]
    assert "runs" in got, (len(mine), list(got))
    width = view.store.levels.width(3)
    names, code_to_index = page_levels.state_names()
    inp = tl.spans.filter((pl.col("lane_kind") == kind) & (pl.col("lane_id") == lane_id)).select(
        pl.lit(0, pl.UInt32).alias("lane"), pl.col("start") - origin, pl.col("end") - origin, "state"
    )
    lo, hi = t_from // width, -(-t_to // width)
    want = runs(inp, width, window=(lo, hi))
    assert got["runs"]["b0"] == want["b0"].to_list()
    assert got["runs"]["b1"] == want["b1"].to_list()
    assert got["runs"]["state"] == code_to_index[want["state"].to_numpy()].tolist()
    assert got["runs"]["fill"] == want["fill"].to_list()
    del names


def test_flows_of_a_window_are_the_timelines_arrows_there(served, go_trace, monkeypatch):
    """/flows answers the arrows overlapping the window, placed as the page places its own
    (computed here row by row from the ingested Timeline), or only their count past the limit."""
    from goblueprint.render import serve
    from goblueprint.timeline.ingest import ingest

    view = served.view
    found_tl = ingest(go_trace("sched")).timeline()  # what the server was started on, whole
    origin, duration = view.store.origin, view.store.duration
    # A window a third of the way in, widened until it holds more arrows than the limit set
    # below: how many a fixed width holds depends on the run the trace recorded.
    t_from, width = duration // 3, duration // 50
    while len(want := window_arrows(found_tl.flows, view.lanes, origin, t_from, t_from + width)) <= 10:
        assert width < duration, "the trace has too few arrows for this test"
        width *= 2
    t_to = t_from + width
    status, body = _get(served.url + f"flows?from={t_from}&to={t_to}")
    assert status == 200
    got = list(zip(*(body["flows"][k] for k in ("from", "to", "from_lane", "to_lane")), strict=True))
    assert [tuple(x) for x in got] == sorted(want, key=lambda row: row[0])
    assert body["n"] == len(want) > 10
    monkeypatch.setattr(serve, "MAX_FLOWS", 10)
    status, body = _get(served.url + f"flows?from={t_from}&to={t_to}")
    assert status == 200 and body["flows"] is None and body["n"] == len(want)
    for query, says in (
        ("from=1", "give one to="),
        ("from=5&to=5", "0 <= from < to"),
        ("from=0&to=9&x=1", "unknown"),
    ):
        status, body = _get(served.url + "flows?" + query)
        assert status == 400 and says in body["error"], (query, body)


def test_search_finds_goroutines_by_block_reason_function_and_id(served, go_trace):
    """/search answers the goroutines (row by row from the ingested goroutines table) whose
    block reasons or start function contain the text, case ignored, or whose id it is; each on
    its lane of the page."""
    import urllib.parse

    from goblueprint.timeline.ingest import ingest
    from goblueprint.timeline.model import LaneKind

    view = served.view
    table = pl.read_parquet(ingest(go_trace("sched")).path / "goroutines.parquet")
    reasons = table.explode("block").unnest("block").filter(pl.col("reason") != "")["reason"]
    common = reasons.value_counts(sort=True)["reason"][0]
    some_id = int(table["id"][len(table) // 2])
    for text in (common.upper(), str(some_id), "zzz-no-such"):
        status, body = _get(served.url + "search?q=" + urllib.parse.quote(text))
        assert status == 200, body
        want = [
            row["id"]
            for row in table.sort("id").iter_rows(named=True)
            if text.lower() in row["name"].lower()
            or any(text.lower() in b["reason"].lower() for b in row["block"])
            or (text.isdigit() and row["id"] == int(text))
        ]
        assert body["n"] == len(want)
        assert [h["gid"] for h in body["hits"]] == want
        for h in body["hits"]:
            lane = view.lanes[h["lane"]]
            assert (lane.kind, lane.lane_id) == (LaneKind.G, h["gid"])
        if text == common.upper():
            assert len(want) > 1 and all(common in h["reasons"] for h in body["hits"])
        if text == str(some_id):
            assert some_id in want
    status, body = _get(served.url + "search?q=")
    assert status == 400 and "non-empty q=" in body["error"]


def test_trace_view_refuses_a_non_local_host(capsys, tmp_path):
    # Refused before the trace is read: the file need not even exist.
    assert main(["trace", "view", str(tmp_path / "t.trace"), "--host", "0.0.0.0"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("goblueprint: error:") and "--allow-remote" in err


def test_trace_view_prints_its_url_serves_and_stops_on_ctrl_c(go_trace):
    import signal
    import subprocess
    import sys

    trace = go_trace("small", "1.27", prog_root=ROOT / "tests" / "trace_check" / "goprogs")
    cmd = [sys.executable, "-m", "goblueprint", "trace", "view", str(trace), "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, (line, proc.poll())
        url = line.split(" at ", 1)[1].split()[0]
        status, page = _get(url)
        assert status == 200 and "connect-src 'self'" in page and '"served":true' in page
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    assert code == 0
    assert "Traceback" not in proc.stderr.read()
