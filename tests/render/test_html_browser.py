"""The HTML timeline in real headless Chromium: it opens offline, draws, zooms, filters, hovers, escapes."""

from __future__ import annotations

from pathlib import Path

import pytest
import synth

from goblueprint.render.timeline_html import render_timeline_html

pytestmark = pytest.mark.browser

GREEN = (0x2E, 0x9E, 0x5B)  # "running" in timeline.js


def _write(tmp_path: Path, tl, title: str = "t") -> Path:
    path = tmp_path / "timeline.html"
    path.write_text(render_timeline_html(tl, title), encoding="utf-8")
    return path


def _count_colour(opened, rgb) -> int:
    """Pixels of one exact colour on the canvas: proof that spans were really painted."""
    return opened.page.evaluate(
        """([r, g, b]) => {
          const c = document.getElementById('cv');
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          let n = 0;
          for (let i = 0; i < d.length; i += 4) if (d[i] === r && d[i + 1] === g && d[i + 2] === b) n++;
          return n;
        }""",
        list(rgb),
    )


def _lane(opened, name_prefix: str) -> int:
    return opened.state(f"S.lanes.findIndex(l => l.name.startsWith({name_prefix!r}))")


def _clean(opened, path: Path) -> None:
    assert opened.console == [], opened.console
    assert opened.requests == [path.resolve().as_uri()], opened.requests


def test_opens_offline_and_draws(tmp_path, open_page, synthetic_timeline):
    path = _write(tmp_path, synthetic_timeline)
    opened = open_page(path)
    stats = opened.state("S.stats")
    assert stats["rects"] + stats["merged"] > 0
    assert _count_colour(opened, GREEN) > 500
    lanes = opened.state("S.lanes.length")
    assert lanes == synthetic_timeline.spans.select("lane_kind", "lane_id").unique().height
    _clean(opened, path)


def test_zoom_and_pan_change_the_visible_range(tmp_path, open_page, synthetic_timeline):
    path = _write(tmp_path, synthetic_timeline)
    opened = open_page(path)
    page = opened.page
    width0 = opened.state("S.t1 - S.t0")
    page.focus("#cv")
    frames = opened.state("S.stats.frames")
    page.keyboard.press("w")
    opened.wait_frame(frames)
    width1 = opened.state("S.t1 - S.t0")
    assert width1 < width0 * 0.8
    # Ctrl-wheel zooms around the cursor and keeps the time under the cursor in place.
    box = page.locator("#cv").bounding_box()
    x, y = box["x"] + box["width"] * 0.6, box["y"] + 200
    under = f"S.t0 + ({box['width'] * 0.6} - 190) / (document.getElementById('cv').clientWidth - 190) * (S.t1 - S.t0)"
    t_under = opened.state(under)
    frames = opened.state("S.stats.frames")
    page.mouse.move(x, y)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -400)
    page.keyboard.up("Control")
    opened.wait_frame(frames)
    width2 = opened.state("S.t1 - S.t0")
    assert width2 < width1 * 0.8
    assert opened.state(under) == pytest.approx(t_under, abs=width1 * 1e-3)
    t0 = opened.state("S.t0")
    frames = opened.state("S.stats.frames")
    page.keyboard.press("d")
    opened.wait_frame(frames)
    assert opened.state("S.t0") > t0
    # Drag to the right shows earlier times.
    t0 = opened.state("S.t0")
    frames = opened.state("S.stats.frames")
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 150, y, steps=5)
    page.mouse.up()
    opened.wait_frame(frames)
    assert opened.state("S.t0") < t0
    frames = opened.state("S.stats.frames")
    page.keyboard.press("s")
    opened.wait_frame(frames)
    assert opened.state("S.t1 - S.t0") > width2
    _clean(opened, path)


def test_filters_hide_lanes(tmp_path, open_page, synthetic_timeline):
    path = _write(tmp_path, synthetic_timeline)
    opened = open_page(path)
    page = opened.page
    g_lanes = (
        "S.rows.filter(r => r.type === 'lane' && S.groups[r.lane.group].kind === 'G').map(r => r.lane.gid)"
    )
    all_g = opened.state(g_lanes)
    assert len(all_g) >= 4
    before = opened.state("S.visibleLanes")
    page.fill("#f-gid", "2,3")
    assert sorted(opened.state(g_lanes)) == [2, 3]
    assert opened.state("S.visibleLanes") < before
    page.fill("#f-gid", "")
    assert sorted(opened.state(g_lanes)) == sorted(all_g)
    page.fill("#f-fn", "no-such-function")
    assert opened.state(g_lanes) == []
    page.fill("#f-fn", "worker")
    assert sorted(opened.state(g_lanes)) == sorted(all_g)
    page.fill("#f-fn", "")
    # State filter: only lanes that have a span in that state remain.
    page.select_option("#f-state", label="stop-the-world")
    names = opened.state("S.rows.filter(r => r.type === 'lane').map(r => r.lane.name)")
    assert names == ["STW"]
    page.select_option("#f-state", label="any")
    # Minimum duration longer than any span hides every lane.
    page.fill("#f-mindur", "10s")
    assert opened.state("S.visibleLanes") == 0
    page.fill("#f-mindur", "")
    assert opened.state("S.visibleLanes") == before
    # Folding a group by clicking its header hides its lanes.
    frames = opened.state("S.stats.frames")
    y = opened.state(
        "S.rows.find(r => r.type === 'group' && S.groups[r.gi].kind === 'P').y - S.scrollY + 26 + 8"
    )
    box = page.locator("#cv").bounding_box()
    page.mouse.click(box["x"] + 40, box["y"] + y)
    opened.wait_frame(frames)
    assert opened.state("S.groups.find(g => g.kind === 'P').collapsed") is True
    assert opened.state("S.visibleLanes") < before
    _clean(opened, path)


def test_search_counts_and_jumps(tmp_path, open_page, synthetic_timeline):
    path = _write(tmp_path, synthetic_timeline)
    opened = open_page(path)
    page = opened.page
    page.fill("#f-search", "chan receive")
    info = page.text_content("#search-info")
    waits = synthetic_timeline.spans.filter(synthetic_timeline.spans["label"] == 3).height
    assert info.startswith(f"{waits} matches")
    page.press("#f-search", "Enter")
    assert "chan receive" in page.text_content("#details")


def test_hover_shows_details_with_stack(tmp_path, open_page, synthetic_timeline):
    path = _write(tmp_path, synthetic_timeline)
    opened = open_page(path)
    page = opened.page
    lane = _lane(opened, "G1 ")
    # The first waiting span of G1 (index 2: running, runnable, waiting): it has stack 1.
    opened.act(f"S.api.setWindow(S.lanes[{lane}].start[2] - 500, S.lanes[{lane}].end[2] + 500)")
    spot = opened.state(f"S.api.locate({lane}, 2)")
    assert spot and spot["visible"]
    box = page.locator("#cv").bounding_box()
    page.mouse.move(box["x"] + spot["x"], box["y"] + spot["y"])
    tip = page.locator("#tip")
    tip.wait_for(state="visible")
    text = tip.text_content()
    assert "waiting: chan receive" in text
    assert "runtime.gopark" in text and "proc.go:400" in text and "main.go:17" in text
    page.mouse.click(box["x"] + spot["x"], box["y"] + spot["y"])
    assert "runtime.gopark" in page.text_content("#details")
    _clean(opened, path)


def test_script_injection_is_shown_as_text(tmp_path, open_page, hostile_timeline):
    title = "<b>title</b><script>window.__pwned=9</script>"
    path = _write(tmp_path, hostile_timeline, title=title)
    raw = path.read_text()
    # The data cannot end the script elements early: exactly our three scripts.
    assert raw.lower().count("</script") == 3
    opened = open_page(path)
    page = opened.page
    assert opened.state("window.__pwned === undefined")
    assert page.evaluate("document.querySelectorAll('img, svg, iframe, object, embed').length") == 0
    assert page.evaluate("document.scripts.length") == 3
    assert page.title().startswith(title)
    assert page.text_content("#title") == title
    lane = _lane(opened, "G1 ")
    assert opened.state(f"S.lanes[{lane}].name") == "G1 main.(*T)." + synth.HOSTILE[0]
    opened.act(f"S.api.setWindow(S.lanes[{lane}].start[2] - 500, S.lanes[{lane}].end[2] + 500)")
    spot = opened.state(f"S.api.locate({lane}, 2)")
    box = page.locator("#cv").bounding_box()
    page.mouse.move(box["x"] + spot["x"], box["y"] + spot["y"])
    page.locator("#tip").wait_for(state="visible")
    text = page.text_content("#tip")
    assert synth.HOSTILE[1] in text and synth.HOSTILE[0] in text
    assert page.evaluate("document.querySelectorAll('#tip *').length") == page.evaluate(
        "document.querySelectorAll('#tip div').length"
    )
    page.fill("#f-search", "onerror")
    assert "matches" in page.text_content("#search-info")
    assert opened.state("window.__pwned === undefined")
    _clean(opened, path)


def test_million_spans_merge_below_a_pixel(tmp_path, open_page):
    tl = synth.million()
    path = _write(tmp_path, tl, "million")
    opened = open_page(path, width=1400, height=800)
    # The page holds every lane, as levels of detail and, within its size bound, exact spans.
    assert opened.state("S.lanes.reduce((a, l) => a + l.total, 0)") == tl.spans.height
    assert 0 < opened.state("S.lanes.reduce((a, l) => a + l.n, 0)") < tl.spans.height
    stats = opened.state("S.stats")
    rows = opened.state("S.rows.filter(r => r.y + r.h > S.scrollY && r.y < S.scrollY + 800).length")
    plot_w = opened.state("document.getElementById('cv').clientWidth - 190")
    # Level of detail: at most about one mark per pixel column per visible row, not one per span.
    drawn = stats["rects"] + stats["merged"] + stats["runs"]
    assert 0 < drawn <= rows * (plot_w + 2)
    assert _count_colour(opened, GREEN) > 1000
    # Zoomed far in, individual spans are drawn as real rectangles.
    opened.act("S.api.setWindow(S.hdr.duration / 2, S.hdr.duration / 2 + 20000)")
    assert opened.state("S.stats.rects") > 8
    _clean(opened, path)


@pytest.mark.slow
def test_real_trace(tmp_path, open_page, sched_timeline):
    path = _write(tmp_path, sched_timeline, "sched")
    opened = open_page(path)
    page = opened.page
    assert _count_colour(opened, GREEN) > 500
    kinds = opened.state("S.groups.filter(g => g.n > 0).map(g => g.kind)")
    assert {"P", "M", "G", "GC"} <= set(kinds)
    # Hover a blocked span that has a stack and see the trace's own frames.
    found = opened.state(
        """(() => { for (const L of S.lanes) for (let i = 0; i < L.n; i++)
             if (L.stack[i] >= 0 && S.api.stackFrames(L.stack[i]).length && S.groups[L.group].kind === 'G'
                 && !S.groups[L.group].collapsed && L.end[i] - L.start[i] > 1000)
               return [L.index, i, S.api.stackFrames(L.stack[i])[0][0]];
           return null; })()"""
    )
    assert found, "no goroutine span with a stack in the sched trace"
    lane, i, leaf = found
    opened.act(
        f"S.subFolded.clear(), S.api.layout(),"
        f" S.scrollY = S.rows.find(r => r.lane && r.lane.index === {lane}).y - 100,"
        f" S.api.setWindow(S.lanes[{lane}].start[{i}], S.lanes[{lane}].end[{i}])"
    )
    spot = opened.state(f"S.api.locate({lane}, {i})")
    box = page.locator("#cv").bounding_box()
    page.mouse.move(box["x"] + spot["x"], box["y"] + spot["y"])
    page.locator("#tip").wait_for(state="visible")
    assert leaf in page.text_content("#tip")
    _clean(opened, path)
