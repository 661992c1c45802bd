"""The timeline viewer's navigation in headless Chromium: axis, scrolling, grouping, keys, stacks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import synth

from goblueprint.render.timeline_html import render_timeline_html

pytestmark = pytest.mark.browser

UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}


def _open(tmp_path: Path, open_page, tl, title: str = "t"):
    path = tmp_path / "timeline.html"
    path.write_text(render_timeline_html(tl, title), encoding="utf-8")
    opened = open_page(path)
    return opened, path


def _clean(opened, path: Path) -> None:
    assert opened.console == [], opened.console
    assert opened.requests == [path.resolve().as_uri()], opened.requests


def _ns(text: str) -> float:
    m = re.fullmatch(r"\+?([0-9.]+) (ns|µs|ms|s)", text)
    assert m, text
    return float(m.group(1)) * UNITS[m.group(2)]


@pytest.mark.parametrize("window_ns", [2000, 200, 100])
def test_axis_labels_are_distinct_offsets(tmp_path, open_page, synthetic_timeline, window_ns):
    opened, path = _open(tmp_path, open_page, synthetic_timeline)
    # Deep inside the trace, where absolute labels would all read the same few digits.
    mid = synthetic_timeline.end_ns - synthetic_timeline.start_ns - 3 * window_ns
    opened.act(f"S.api.setWindow({mid}, {mid + window_ns})")
    ticks = opened.state("S.ticks")
    texts = [t["text"] for t in ticks]
    assert len(ticks) >= 5, texts
    assert len(set(texts)) == len(texts), texts
    # Each label is the tick's offset from the base shown once at the left, to the ns.
    base = _ns(opened.state("S.axisBase"))
    t0, t1 = opened.state("[S.t0, S.t1]")
    assert t0 - (t1 - t0) <= base <= t0
    for tick in ticks:
        assert t0 <= tick["t"] <= t1
        assert _ns(tick["text"]) == pytest.approx(tick["t"] - base, abs=0.5), tick
    _clean(opened, path)


def test_wheel_scrolls_lanes_ctrl_wheel_zooms_and_the_scrollbar_follows(tmp_path, open_page):
    tl = synth.synthetic(goroutines=60, functions=tuple(f"main.f{k}" for k in range(30)))
    opened, path = _open(tmp_path, open_page, tl)
    page = opened.page
    bar = opened.state("(() => { const v = document.getElementById('vscroll');"
                       " return {h: v.scrollHeight, ch: v.clientHeight, w: v.offsetWidth}; })()")  # fmt: skip
    assert bar["w"] > 0 and bar["h"] > bar["ch"] > 0, bar
    window = opened.state("S.t1 - S.t0")
    box = page.locator("#cv").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    frames = opened.state("S.stats.frames")
    page.mouse.wheel(0, 300)
    opened.wait_frame(frames)
    scrolled = opened.state("S.scrollY")
    assert scrolled > 0
    assert opened.state("S.t1 - S.t0") == window  # a plain wheel does not zoom
    assert opened.state("document.getElementById('vscroll').scrollTop") == pytest.approx(scrolled, abs=1)
    frames = opened.state("S.stats.frames")
    page.keyboard.down("Control")
    page.mouse.wheel(0, -300)
    page.keyboard.up("Control")
    opened.wait_frame(frames)
    assert opened.state("S.t1 - S.t0") < window * 0.8
    assert opened.state("S.scrollY") == scrolled  # ctrl-wheel does not scroll
    # Moving the scrollbar (as dragging its thumb does) scrolls the lanes.
    frames = opened.state("S.stats.frames")
    page.evaluate("document.getElementById('vscroll').scrollTop = 40")
    opened.wait_frame(frames)
    assert opened.state("S.scrollY") == pytest.approx(40, abs=1)
    _clean(opened, path)


def test_goroutines_fold_by_start_function(tmp_path, open_page):
    fns = ("main.producer", "main.consumer", "main.loner")
    tl = synth.synthetic(goroutines=8, functions=fns[:2] * 3 + fns[2:] + fns[:1])
    opened, path = _open(tmp_path, open_page, tl)
    page = opened.page
    subs = opened.state("S.rows.filter(r => r.type === 'sub').map(r => [S.strings[r.fn], r.count, r.folded])")
    # Goroutine 8 is the system one (folded group of its own); a function with one goroutine has no header.
    assert sorted(subs) == [["main.consumer", 3, False], ["main.producer", 3, False]]
    visible = "S.rows.filter(r => r.type === 'lane').map(r => r.lane.name)"
    before = opened.state(visible)
    assert sum(name.endswith("main.producer") for name in before) == 3
    y = opened.state(
        "S.rows.find(r => r.type === 'sub' && S.strings[r.fn] === 'main.producer').y - S.scrollY + 26 + 6"
    )
    box = page.locator("#cv").bounding_box()
    frames = opened.state("S.stats.frames")
    page.mouse.click(box["x"] + 60, box["y"] + y)
    opened.wait_frame(frames)
    folded = opened.state(visible)
    assert [n for n in before if not n.endswith("main.producer")] == folded
    assert (
        opened.state("S.rows.find(r => r.type === 'sub' && S.strings[r.fn] === 'main.producer').count") == 3
    )
    frames = opened.state("S.stats.frames")
    page.mouse.click(box["x"] + 60, box["y"] + y)
    opened.wait_frame(frames)
    assert opened.state(visible) == before
    _clean(opened, path)


def test_many_goroutines_of_one_function_start_folded(tmp_path, open_page):
    tl = synth.synthetic(goroutines=41, spans_per_g=6)
    opened, path = _open(tmp_path, open_page, tl)
    assert opened.state("S.rows.filter(r => r.type === 'sub').map(r => [r.count, r.folded])") == [[40, True]]
    shown = "S.rows.filter(r => r.type === 'lane' && /^G\\d+ main.worker$/.test(r.lane.name)).length"
    assert opened.state(shown) == 0
    # The folded header still shows when its goroutines run: running-green in its row.
    green = opened.state(
        """(() => { const r = S.rows.find(r => r.type === 'sub'), c = document.getElementById('cv');
             const d = c.getContext('2d').getImageData(190 * devicePixelRatio, (r.y - S.scrollY + 26) * devicePixelRatio,
                                                       c.width - 190 * devicePixelRatio, 18 * devicePixelRatio).data;
             let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] === 0x2e && d[i + 1] === 0x9e && d[i + 2] === 0x5b) n++;
             return n; })()"""
    )
    assert green > 50
    # A search hit inside the folded group unfolds it, so the hit can be shown.
    opened.page.fill("#f-search", "chan receive")
    opened.page.press("#f-search", "Enter")
    pinned = opened.state("S.pinned && S.rows.some(r => r.type === 'lane' && r.lane === S.pinned.lane)")
    assert pinned is True
    assert opened.state(shown) == 40
    _clean(opened, path)


def test_help_is_the_key_table_and_the_keys_do_what_it_says(tmp_path, open_page, synthetic_timeline):
    opened, path = _open(tmp_path, open_page, synthetic_timeline)
    page = opened.page
    table = opened.state("S.api.keyTable()")
    shown = page.eval_on_selector_all("#help-keys li", "items => items.map(li => li.textContent)")
    assert shown == [" ".join(e["names"]) + e["what"] for e in table]
    # The one-line hint only names keys the table has, for what the table says.
    hint = page.text_content("#hint")
    claims = re.findall(r"(?:^|· )([^·:]+?): ([^·]+?)(?= ·|$)", hint)
    keyed = {" / ".join(e["names"]).replace(" / ", "/"): e["what"] for e in table}
    key_claims = [(k, w) for k, w in claims if k in keyed]
    assert key_claims and all(keyed[k] == w for k, w in key_claims), claims
    assert "WASD" not in hint
    page.focus("#cv")
    opened.act("S.api.setWindow(S.hdr.duration * 0.3, S.hdr.duration * 0.6)")
    effects = {
        "zoom in": "S.t1 - S.t0",
        "zoom out": "S.t1 - S.t0",
        "pan left": "S.t0",
        "pan right": "S.t0",
    }
    for entry in table:
        for key in entry["keys"]:
            before = opened.state("[S.t1 - S.t0, S.t0]")
            page.keyboard.press(key)
            assert opened.state("S.lastKey") == entry["what"], key
            opened.state("S.lastKey = null")
            probe = effects.get(entry["what"])
            if probe:
                after = opened.state(probe)
                old = before[0] if probe == "S.t1 - S.t0" else before[1]
                grew = entry["what"] in ("zoom out", "pan right")
                assert (after > old) if grew else (after < old), (key, entry["what"])
            if entry["what"] == "show or hide this help":
                assert page.is_visible("#help")
                page.keyboard.press(key)
                assert not page.is_visible("#help")
                opened.state("S.lastKey = null")
    _clean(opened, path)


def test_hovering_a_running_span_shows_where_it_resumed(tmp_path, open_page):
    # As the builder writes them: running spans have no stack of their own.
    tl = synth.synthetic(run_stack=0)
    opened, path = _open(tmp_path, open_page, tl)
    page = opened.page
    lane = opened.state("S.lanes.findIndex(l => l.name.startsWith('G1 '))")
    # Spans of G1: running, runnable, waiting (blocked in runtime.gopark), running...
    assert opened.state(f"S.hdr.states[S.lanes[{lane}].state[3]]") == "running"
    opened.act(f"S.api.setWindow(S.lanes[{lane}].start[3] - 100, S.lanes[{lane}].end[3] + 100)")
    spot = opened.state(f"S.api.locate({lane}, 3)")
    box = page.locator("#cv").bounding_box()
    page.mouse.move(box["x"] + spot["x"], box["y"] + spot["y"])
    page.locator("#tip").wait_for(state="visible")
    text = page.text_content("#tip")
    assert "stack at start" in text and "runtime.gopark" in text and "proc.go:400" in text, text
    # The processor running that goroutine shows the same run with the same stack.
    p_spot = opened.state(
        f"""(() => {{ const g = S.lanes[{lane}], t = g.start[3];
             for (const L of S.lanes) if (L.name.startsWith('Proc '))
               for (let i = 0; i < L.n; i++) if (L.sgid[i] === 1 && L.start[i] === t) return S.api.locate(L.index, i);
             return null; }})()"""
    )
    assert p_spot and p_spot["visible"]
    page.mouse.move(box["x"] + p_spot["x"], box["y"] + p_spot["y"])
    page.wait_for_function("() => document.getElementById('tip').textContent.includes('Proc ')")
    assert "runtime.gopark" in page.text_content("#tip")
    _clean(opened, path)


@pytest.mark.slow
def test_real_trace_running_span_shows_where_it_resumed(tmp_path, open_page, sched_timeline):
    opened, path = _open(tmp_path, open_page, sched_timeline, "sched")
    page = opened.page
    # A run of a main.* goroutine long enough to hover, whose previous span has a stack.
    found = opened.state(
        """(() => { for (const L of S.lanes) {
             if (S.groups[L.group].kind !== 'G' || !L.name.includes(' main.')) continue;
             for (let i = 1; i < L.n; i++)
               if (S.hdr.states[L.state[i]] === 'running' && L.stack[i] >= 0 && L.end[i] - L.start[i] > 2000)
                 return [L.index, i]; }
           return null; })()"""
    )
    assert found, "no running span with a stack in the sched trace"
    lane, i = found
    # What the Timeline itself says: the stack of the last span before this run that has one.
    name = opened.state(f"S.lanes[{lane}].name")
    gid = int(name.split()[0][1:])
    start_ns = opened.state(f"S.lanes[{lane}].start[{i}]") + sched_timeline.start_ns
    before = sched_timeline.spans.filter(
        (sched_timeline.spans["lane_kind"] == 0)
        & (sched_timeline.spans["lane_id"] == gid)
        & (sched_timeline.spans["start"] < start_ns)
        & (sched_timeline.spans["stack"] > 0)
    ).sort("start")
    leaf_func, leaf_file, leaf_line = sched_timeline.stack(int(before["stack"][-1]))[0]
    opened.act(
        f"S.subFolded.clear(), S.api.layout(),"
        f" S.scrollY = S.rows.find(r => r.lane && r.lane.index === {lane}).y - 100,"
        f" S.api.setWindow(S.lanes[{lane}].start[{i}], S.lanes[{lane}].end[{i}])"
    )
    spot = opened.state(f"S.api.locate({lane}, {i})")
    box = page.locator("#cv").bounding_box()
    page.mouse.move(box["x"] + spot["x"], box["y"] + spot["y"])
    page.locator("#tip").wait_for(state="visible")
    text = page.text_content("#tip")
    assert "stack at start" in text and leaf_func in text and f"{leaf_file}:{leaf_line}" in text, text
    _clean(opened, path)
