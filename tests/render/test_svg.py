"""The SVG Gantt chart: well-formed, escaped, merged below a pixel, golden output, empty windows refused."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import synth

from goblueprint.errors import UsageError
from goblueprint.render.svg import render_svg

GOLDEN = Path(__file__).parent / "golden"
NS = "{http://www.w3.org/2000/svg}"


def test_golden(synthetic_timeline):
    svg = render_svg(synthetic_timeline, 0, 400_000, title="synthetic")
    path = GOLDEN / "synthetic.svg"
    if os.environ.get("GOBLUEPRINT_REGEN") == "1":
        path.write_text(svg, encoding="utf-8")
    assert svg == path.read_text(encoding="utf-8"), "SVG changed: rerun with GOBLUEPRINT_REGEN=1 if intended"


def test_hostile_strings_are_text(hostile_timeline):
    svg = render_svg(hostile_timeline, 0, 400_000, title="<script>alert(1)</script>")
    root = ET.fromstring(svg)
    tags = {el.tag.removeprefix(NS) for el in root.iter()}
    assert tags <= {"svg", "title", "style", "rect", "text"}, tags
    texts = "".join(el.text or "" for el in root.iter())
    assert synth.HOSTILE[0] in texts  # the goroutine's function name, shown as written
    assert "<script>alert(1)</script>" in texts


def test_lanes_are_those_with_spans_in_the_window(synthetic_timeline):
    tl = synthetic_timeline
    a, b = 200_000, 300_000
    root = ET.fromstring(render_svg(tl, a, b))
    labels = {el.text for el in root.iter(f"{NS}text") if el.get("class") == "l"}
    spans = tl.spans
    inside = spans.filter((spans["end"] > tl.start_ns + a) & (spans["start"] < tl.start_ns + b))
    expect = inside.select("lane_kind", "lane_id").unique().height
    assert len(labels) == expect


def test_subpixel_spans_merge(synthetic_timeline):
    tl = synth.million(n_spans=400_000, goroutines=50)
    svg = render_svg(tl, 0, tl.end_ns - tl.start_ns, width=800)
    rects = svg.count("<rect")
    lanes = svg.count('class="l"')
    assert rects <= lanes * 800 + 100  # at most about one mark per pixel column per lane
    assert rects < tl.spans.height / 5


def test_empty_windows_are_errors(synthetic_timeline):
    with pytest.raises(UsageError, match="must be after"):
        render_svg(synthetic_timeline, 5000, 5000)
    end = synthetic_timeline.end_ns - synthetic_timeline.start_ns
    with pytest.raises(UsageError, match="no spans between"):
        render_svg(synthetic_timeline, end + 10**9, end + 2 * 10**9)
