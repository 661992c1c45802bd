"""The timeline page is made a batch at a time and written a part at a time: the same bytes as
the page read whole and made as one string, whatever the batches' and parts' sizes."""

from __future__ import annotations

import base64
import gzip
import html
import io
from typing import Any

import pytest

from goblueprint.render import levels as page_levels
from goblueprint.render import page_spans, timeline_html
from goblueprint.render.timeline_html import build_page, embed_json, tables_payload
from goblueprint.timeline import batches
from goblueprint.timeline.detail_store import DetailStore, memory_tables
from goblueprint.timeline.model import LaneKind, Timeline


def one_string_page(tl: Timeline, title: str, compress: bool) -> bytes:
    """The page as it was made before it was written in parts: the whole raw blob, compressed
    at once, base64-encoded at once, substituted into the template in one string."""
    with memory_tables(tl) as tables:
        header, raw = tables_payload(tables, title)
    data = gzip.compress(raw, compresslevel=5, mtime=0) if compress else raw
    header["blob"] = {"codec": "gzip" if compress else "raw", "size": len(raw)}
    parts = {
        "CONNECT": "",
        "TITLE": html.escape(f"{title} · goblueprint timeline"),
        "CSS": timeline_html._asset("timeline.css"),
        "JS": timeline_html._asset("timeline.js"),
        "HEADER": embed_json(header),
        "BLOB": base64.b64encode(data).decode("ascii"),
    }
    page = timeline_html._PLACEHOLDER.sub(lambda m: parts[m.group(1)], timeline_html._asset("timeline.html"))
    return page.encode("utf-8")


def page_in_parts(tl: Timeline, title: str, compress: bool = True) -> tuple[bytes, list[int]]:
    """The page of TL written to a file object, and the size of each write."""
    with memory_tables(tl) as tables:
        page = build_page(tables, title, compress)
    sizes: list[int] = []

    class Counted(io.BytesIO):
        def write(self, b: Any) -> int:
            sizes.append(len(b))
            return super().write(b)

    out = Counted()
    page.write(out)
    return out.getvalue(), sizes


@pytest.mark.parametrize("compress", [True, False])
def test_page_written_in_parts_is_the_page_made_as_one_string(
    sched_timeline: Timeline, compress: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Slices of 21 bytes: the blob's pieces end mid-group of three bytes again and again,
    # so a dropped or doubled remainder would show in the base64 text.
    monkeypatch.setattr(timeline_html, "_B64_SLICE", 21)
    got, sizes = page_in_parts(sched_timeline, "sched", compress)
    assert got == one_string_page(sched_timeline, "sched", compress)
    # Written in parts, none the whole: the largest is a piece of the template (~58 KB), which
    # is more than a tenth of a small trace's compressed page (CI's fresh trace: 425 KB).
    assert len(sizes) > 100 and max(sizes) < len(got) / 2


def test_tiny_batches_make_the_page_one_batch_makes(
    sched_timeline: Timeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every lane exact, the P and M lanes too: their runs take the stacks of G runs, which
    # tiny batches read in other batches than theirs.
    monkeypatch.setattr(page_levels, "PER_LANE", 10**9)
    monkeypatch.setattr(page_levels, "BUDGET", 2**40)
    # Read whole: every exact span in one batch, the counters in one, the stacks renumbered at once.
    monkeypatch.setattr(page_spans, "SPAN_BATCH", 2**40)
    monkeypatch.setattr(batches, "BATCH_ROWS", 2**40)
    monkeypatch.setattr(timeline_html, "_DENSE_SLICE", 2**40)
    want, _ = page_in_parts(sched_timeline, "sched")
    reads: list[set[int]] = []
    real = DetailStore.lane_spans

    def spy(self: DetailStore, lanes: Any, **kw: Any) -> Any:
        reads.append(set(lanes["lane_kind"].to_list()))
        return real(self, lanes, **kw)

    # One lane a batch of exact spans, 1000 counter samples a batch, stacks renumbered 7 at a time.
    monkeypatch.setattr(DetailStore, "lane_spans", spy)
    monkeypatch.setattr(page_spans, "SPAN_BATCH", 1)
    monkeypatch.setattr(batches, "BATCH_ROWS", 1000)
    monkeypatch.setattr(timeline_html, "_DENSE_SLICE", 7)
    got, _ = page_in_parts(sched_timeline, "sched")
    assert got == want
    # Not vacuous: the lanes came one at a time, P and M lanes among them, and the counters
    # (one of them past the page's bound, test_payload) in many batches.
    assert len(reads) > 20 and all(len(kinds) == 1 for kinds in reads)
    assert {int(LaneKind.G), int(LaneKind.P), int(LaneKind.M)} <= set().union(*reads)
    assert sched_timeline.counters.height > 20 * 1000
