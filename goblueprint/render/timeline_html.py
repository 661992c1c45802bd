"""The timeline as one self-contained, offline HTML page.

The page is a template with inline CSS and JS (package data next to this file)
and the timeline embedded as data: a JSON header (lanes, strings, stacks) and
one gzip-compressed blob of little-endian typed arrays, base64-encoded.  The
viewer decodes the blob with the browser's own DecompressionStream, so no
library and no network is needed.

Trace strings are untrusted.  They only ever travel inside the JSON header,
which is escaped so that no ``<`` can appear in it: ``</script>`` inside a
function name cannot end the script element, and the viewer shows every string
with ``textContent`` or canvas ``fillText``, never as markup.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Any, BinaryIO

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.render.flow_lanes import PLACED_COLUMNS, placed_flows
from goblueprint.render.lanes import (
    COUNTER_GROUP,
    GROUPS,
    Lane,
    arrange_counted,
    counter_owners,
    span_titles,
    state_names,
)
from goblueprint.render.levels import PER_LANE, PageDetail, plan_page
from goblueprint.render.page_counters import thin_counters
from goblueprint.render.page_spans import page_spans, span_gids
from goblueprint.render.run_stacks import running_stacks
from goblueprint.timeline.batches import frame_batches
from goblueprint.timeline.detail_store import PageTables, memory_tables
from goblueprint.timeline.model import InstantKind, LaneKind, Timeline

FORMAT_VERSION = 2  # 2: stacks as an interned table in the blob; spans carry end_stack
# Instants worth a marker on a lane; CPU samples and syncs would only bury them.
_SHOWN_INSTANTS = (
    InstantKind.LOG,
    InstantKind.TASK_BEGIN,
    InstantKind.TASK_END,
    InstantKind.GOMAXPROCS,
    InstantKind.LABEL,
    InstantKind.OTHER,
)
_INSTANT_TITLES = {
    InstantKind.LOG: "log",
    InstantKind.TASK_BEGIN: "task begin",
    InstantKind.TASK_END: "task end",
    InstantKind.GOMAXPROCS: "GOMAXPROCS",
    InstantKind.LABEL: "label",
    InstantKind.OTHER: "event",
}
# Friendlier names for the counters Go's runtime/metrics emit into traces.
COUNTER_TITLES = {
    "/sched/goroutines:goroutines": "goroutines",
    "/memory/classes/heap/objects:bytes": "heap in use",
    "/gc/heap/goal:bytes": "heap goal",
    "/sched/gomaxprocs:threads": "GOMAXPROCS",
}
FLOW_BYTES = 24  # from f8, to f8, from_lane i4, to_lane i4
GZIP_LEVEL = 5
_DENSE_SLICE = 1 << 16  # stack ids renumbered at once
_B64_SLICE = 3 << 16  # bytes of the blob base64-encoded at once (a multiple of 3)
_PLACEHOLDER = re.compile(r"<!--GBP:([A-Z]+)-->")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


class _Strings:
    """The timeline's string table plus strings the views compose (lane names, instant titles)."""

    def __init__(self, base: list[str]) -> None:
        self.items = list(base)
        self._index: dict[str, int] = {}

    def intern(self, text: str) -> int:
        sid = self._index.get(text)
        if sid is None:
            sid = len(self.items)
            self.items.append(text)
            self._index[text] = sid
        return sid


class _Blob:
    """Typed arrays laid end to end, each 8-byte aligned so the viewer can map them in place.

    Compressed (gzip, as ``gzip.compress(raw, 5, mtime=0)`` makes it: zlib's stream is the
    same however its input is cut) as each array is added, so the raw bytes are never all
    held, only their compressed form.  The compressing is done on a thread of its own (zlib
    lets go of the GIL), in the order the arrays come, while the page's next tables are made;
    at most ``_HELD`` raw bytes wait for it.
    """

    _HELD = 64 << 20

    def __init__(self, compress: bool = False) -> None:
        self.parts: list[bytes] = []
        self.size = 0  # raw bytes
        self._deflate = zlib.compressobj(level=GZIP_LEVEL, wbits=31) if compress else None
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="goblueprint-blob") if compress else None
        self._pending: deque[tuple[Future[bytes], int]] = deque()
        self._held = 0  # raw bytes given to the thread, not compressed yet

    def add(self, array: np.ndarray, dtype: str) -> int:
        data = np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<"))
        offset = self.size
        pad = (-data.nbytes) % 8
        self._put(data.data.cast("B") if data.nbytes else b"")
        self._put(b"\0" * pad)
        self.size += data.nbytes + pad
        return offset

    def table(self, n: int, columns: dict[str, tuple[np.ndarray, str]]) -> dict[str, Any]:
        return {"n": n, "arrays": {name: self.add(arr, dt) for name, (arr, dt) in columns.items()}}

    def _put(self, data: bytes | memoryview) -> None:
        if self._deflate is None or self._pool is None:
            self.parts.append(bytes(data))
            return
        n = len(data)
        while self._pending and self._held + n > self._HELD:
            self._take()
        # The array's bytes are held by DATA (a view) until the thread is done with them.
        self._pending.append((self._pool.submit(self._deflate.compress, data), n))
        self._held += n

    def _take(self) -> None:
        job, n = self._pending.popleft()
        if piece := job.result():
            self.parts.append(piece)
        self._held -= n

    def finish(self) -> list[bytes]:
        """The blob's bytes (compressed if asked) as pieces; nothing may be added after."""
        if self._deflate is not None and self._pool is not None:
            try:
                while self._pending:
                    self._take()
            finally:
                self._pool.shutdown()
            self.parts.append(self._deflate.flush())
            self._deflate = None
        return self.parts


def timeline_payload(tl: Timeline, title: str = "") -> tuple[dict[str, Any], bytes]:
    """The page data of TL, a Timeline held in memory (see ``tables_payload``)."""
    with memory_tables(tl) as tables:
        return tables_payload(tables, title)


def tables_payload(
    tables: PageTables, title: str = "", *, served: bool = False
) -> tuple[dict[str, Any], bytes]:
    """The viewer's data: a JSON-able header and the raw (uncompressed) typed-array blob.

    The page carries levels of detail and the exact spans of the lanes small enough
    (render.levels states the bound), read from TABLES a few lanes' worth at a time: the
    spans of the trace are never all held.  SERVED: the page of ``trace view``, holding
    level 0 only; the viewer fetches the rest as tiles.
    """
    blob = _Blob()
    header = _payload(tables, title, blob, served=served)
    return header, b"".join(blob.finish())


def _payload(tables: PageTables, title: str, blob: _Blob, *, served: bool) -> dict[str, Any]:
    """``tables_payload``'s header, its arrays added to BLOB."""
    tl, store = tables.light, tables.store
    strings = _Strings(tl.strings)
    lanes = arrange_counted(tl, store.span_counts())
    detail = plan_page(store, lanes, served=served)
    # Counters and arrows first, while little else is held (their few rows wait for their
    # place in the blob): the peak is then the exact spans' alone, not theirs on top of it.
    samples = (
        tables.thinned
        if tables.thinned is not None
        else thin_counters(tables.counters, tl.start_ns, max(1, tl.end_ns - tl.start_ns))
    )
    arrows, flows_whole = _kept_flows(tables.flows, lanes, detail)
    spans, lanes = page_spans(tl, store, lanes, detail.exact, strings.intern)
    names, _code_to_index = state_names()
    origin = tl.start_ns

    lane_index = {(int(lane.kind), lane.lane_id): k for k, lane in enumerate(lanes)}
    instants, instant_ranges = _instants(tl, tables.instants, lane_index, strings)
    instant_stack = instants["stack"].to_numpy().astype(np.int64)
    # Only the stacks something on screen refers to, renumbered 0..k-1 (-1: none).
    used = unique(np.concatenate((spans.stacks, instant_stack)))
    used = used[used != 0]
    n_spans = len(spans)
    header_spans = blob.table(
        n_spans,
        {
            "start": (spans.start, "f8"),
            "end": (spans.end, "f8"),
            "label": (spans.title, "i4"),
            "stack": (_dense(spans.start_stack, used), "i4"),
            "end_stack": (_dense(spans.end_stack, used), "i4"),
            "gid": (spans.gid, "i4"),
            "state": (spans.state, "u1"),
        },
    )
    header_instants = blob.table(
        instants.height,
        {
            "time": (instants["time"].to_numpy() - origin, "f8"),
            "label": (instants["text"].to_numpy(), "i4"),
            "stack": (_dense(instant_stack, used), "i4"),
        },
    )
    header_stacks = _stack_table(tl, used, blob)
    # The blob holds their bytes now: let the exact spans and what was made of them go before
    # the counters and flows are read (the peak is whichever stage holds most, not their sum).
    del spans, instants, instant_stack, used
    groups = [
        {"name": title_, "kind": "G" if key == "SYS" else key, "collapsed": folded}
        for key, title_, _k, folded in GROUPS
    ]
    group_index = {key: k for k, (key, *_rest) in enumerate(GROUPS)}
    level_tables, level_ranges = _levels(detail, len(lanes), blob)
    header_lanes = []
    for k, lane in enumerate(lanes):
        header_lanes.append(
            {
                "name": lane.name,
                "group": group_index[lane.group],
                "gid": lane.lane_id if lane.kind == LaneKind.G else None,
                "fn": strings.intern(lane.function) if lane.function else -1,
                "spans": [lane.lo, lane.hi],
                "exact": bool(detail.exact[k]),
                "total": int(detail.counts[k]),
                "levels": level_ranges[k],
                "instants": list(instant_ranges.get(k, (0, 0))),
            }
        )

    counters, header_samples = _counters(tl, samples, blob, origin, len(groups), lanes, lane_index)
    if any(c["lane"] < 0 for c in counters):
        groups.append({"name": COUNTER_GROUP, "kind": "C", "collapsed": False})
    header_flows = _flows(arrows, blob, origin)
    header = {
        "format": FORMAT_VERSION,
        "title": title,
        "go_version": tl.go_version,
        "origin": origin,
        "duration": max(0, tl.end_ns - tl.start_ns),
        "states": names,
        "groups": groups,
        "lanes": header_lanes,
        "counters": counters,
        "spans": header_spans,
        "instants": header_instants,
        "samples": header_samples,
        "flows": header_flows,
        "flows_whole": flows_whole,
        "stacks": header_stacks,
        "strings": strings.items,
        "detail": {
            **detail.levels.to_json(),
            "levels": level_tables,
            "per_lane": PER_LANE,
            "served": served,
        },
    }
    return header


def _dense(stacks: np.ndarray, used: np.ndarray) -> np.ndarray:
    """STACKS (the Timeline's ids, 0: none) as indexes into USED (sorted, no 0), -1 for none:
    the page's i4, made a slice at a time (no i8 temporaries of every span)."""
    out = np.empty(len(stacks), np.int32)
    for lo in range(0, len(stacks), _DENSE_SLICE):
        part = stacks[lo : lo + _DENSE_SLICE]
        out[lo : lo + len(part)] = np.where(part != 0, np.searchsorted(used, part), -1)
    return out


def span_fields(
    tl: Timeline, spans: pl.DataFrame, lanes: list[Lane], intern: Callable[[str], int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row of SPANS (sorted as ``sorted_spans``): its title (a string id from INTERN), its
    goroutine (-1: none), and its stacks at start and end (the Timeline's stack ids, 0: none).

    The title is the same text Perfetto and Chrome show.
    """
    title_of_span, titles = span_titles(tl, spans, lanes)
    title_ids = np.array([intern(t) for t in titles], dtype=np.int64)
    display = title_ids[title_of_span] if len(titles) else np.zeros(0, dtype=np.int64)
    start_stack, end_stack = running_stacks(spans)
    return display, span_gids(spans), start_stack, end_stack


def _levels(
    detail: PageDetail, n_lanes: int, blob: _Blob
) -> tuple[list[dict[str, Any]], list[list[list[int]]]]:
    """One typed-array table per level (runs by lane, then b0) and, per lane, the row range of
    each level the page holds for it, coarse to fine (a lane's list stops at its finest)."""
    tables = []
    ranges: list[list[list[int]]] = [[] for _ in range(n_lanes)]
    for level in detail.runs:
        lane = level["lane"].to_numpy()
        tables.append(
            blob.table(
                level.height,
                {
                    "b0": (level["b0"].to_numpy(), "u4"),
                    "b1": (level["b1"].to_numpy(), "u4"),
                    "state": (level["state"].to_numpy(), "u1"),
                    "fill": (level["fill"].to_numpy(), "u1"),
                },
            )
        )
        present = unique(lane)
        lo = np.searchsorted(lane, present, side="left")
        hi = np.searchsorted(lane, present, side="right")
        for k, a, b in zip(present.tolist(), lo.tolist(), hi.tolist(), strict=True):
            if len(ranges[k]) == len(tables) - 1:  # levels of a lane stay contiguous from 0
                ranges[k].append([a, b])
    return tables, ranges


def _lane_of(lane_index: dict[tuple[int, int], int], kind: int, ids: np.ndarray) -> np.ndarray:
    """LANE_INDEX[(KIND, id)] of each of IDS, -1 where it has none (a lookup per row was
    0.1 s of the 30.6 MB trace's instants)."""
    pairs = sorted((lane_id, at) for (k, lane_id), at in lane_index.items() if k == kind)
    keys = np.array([lane_id for lane_id, _ in pairs], np.int64)
    values = np.array([at for _, at in pairs], np.int64)
    pos = np.minimum(np.searchsorted(keys, ids), max(len(keys) - 1, 0))
    hit = (keys[pos] == ids) if len(keys) else np.zeros(len(ids), np.bool_)
    return np.where(hit, values[pos] if len(keys) else -1, -1)


def _instants(
    tl: Timeline, table: pl.LazyFrame, lane_index: dict[tuple[int, int], int], strings: _Strings
) -> tuple[pl.DataFrame, dict[int, tuple[int, int]]]:
    """Instants placed on the lane of their goroutine, else their P, else their M; sorted by lane, time."""
    # Filtered as read: CPU samples and syncs, most of a profiled trace's instants, never held.
    df = table.filter(pl.col("kind").is_in([int(k) for k in _SHOWN_INSTANTS])).collect()
    if df.height == 0:
        return df.with_columns(pl.lit(0, pl.Int64).alias("lane"), pl.lit(0, pl.Int64).alias("text")), {}
    lane = np.full(df.height, -1, dtype=np.int64)
    for kind, column in ((LaneKind.M, "m"), (LaneKind.P, "p"), (LaneKind.G, "g")):
        found = _lane_of(lane_index, int(kind), df[column].to_numpy())
        lane = np.where(found >= 0, found, lane)
    combos = {}
    texts = np.empty(df.height, dtype=np.int64)
    for k, (kind, label, category) in enumerate(
        zip(df["kind"].to_list(), df["label"].to_list(), df["category"].to_list(), strict=True)
    ):
        key = (kind, label, category)
        sid = combos.get(key)
        if sid is None:
            parts = [_INSTANT_TITLES.get(InstantKind(kind), "event")]
            if category:
                parts.append(f"[{tl.strings[category]}]")
            if label:
                parts.append(tl.strings[label])
            sid = combos[key] = strings.intern(" ".join(parts))
        texts[k] = sid
    df = (
        df.with_columns(pl.Series("lane", lane), pl.Series("text", texts))
        .filter(pl.col("lane") >= 0)
        .sort(["lane", "time"])
        # A lane's events are part of its exact detail: bounded per lane as its spans are.
        .filter(pl.len().over("lane") <= PER_LANE)
    )
    ranges: dict[int, tuple[int, int]] = {}
    lanes_col = df["lane"].to_numpy()
    if len(lanes_col):
        change = np.flatnonzero(lanes_col[1:] != lanes_col[:-1]) + 1
        starts = np.concatenate(([0], change))
        ends = np.concatenate((change, [len(lanes_col)]))
        for lo, hi in zip(starts.tolist(), ends.tolist(), strict=True):
            ranges[int(lanes_col[lo])] = (lo, hi)
    return df, ranges


def _counters(
    tl: Timeline,
    df: pl.DataFrame,
    blob: _Blob,
    origin: int,
    group: int,
    lanes: list[Lane],
    lane_index: dict[tuple[int, int], int],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Counter rows of DF (``thin_counters``): those named after a P or M lane
    (``counter_lanes``) go right under that lane ("lane": its index, in its group); the others
    in the shared counter group (lane -1)."""
    group_index = {key: k for k, (key, *_rest) in enumerate(GROUPS)}
    owners = counter_owners(df["name"].unique().to_list(), tl.strings)
    out = []
    names = df["name"].to_numpy()
    if len(names):
        change = np.flatnonzero(names[1:] != names[:-1]) + 1
        starts = np.concatenate(([0], change))
        ends = np.concatenate((change, [len(names)]))
        for lo, hi in zip(starts.tolist(), ends.tolist(), strict=True):
            raw = tl.strings[int(names[lo])]
            owner = owners.get(int(names[lo]))
            at = lane_index.get((int(owner[0]), owner[1]), -1) if owner else -1
            out.append(
                {
                    "name": COUNTER_TITLES.get(raw, raw),
                    "unit": "bytes" if raw.endswith(":bytes") else "",
                    "group": group_index[lanes[at].group] if at >= 0 else group,
                    "lane": at,
                    "samples": [lo, hi],
                }
            )
    table = blob.table(
        df.height,
        {"time": (df["time"].to_numpy() - origin, "f8"), "value": (df["value"].to_numpy(), "f8")},
    )
    return out, table


def _kept_flows(flows: pl.LazyFrame, lanes: list[Lane], detail: PageDetail) -> tuple[pl.DataFrame, bool]:
    """The wake-up arrows the page holds (placed on lanes by ``flow_lanes.placed_flows``),
    sorted by time, and whether they are all of them.

    Arrows count against the page's budget: all of them if they fit what is left of it,
    else those between lanes whose exact spans the page holds if those fit, else none.
    FLOWS is read a batch at a time (timeline.batches), once to count the arrows (until
    too many are counted to keep any) and, if the page keeps some, once more for those:
    only the kept ones are ever held.
    """
    exact_lanes = pl.Series(np.flatnonzero(detail.exact).astype(np.int32)).implode()
    between_exact = pl.col("from_lane").is_in(exact_lanes) & pl.col("to_lane").is_in(exact_lanes)
    every = exact = 0
    for placed in _placed_batches(flows, lanes):
        counts = placed.select(pl.len().alias("all"), between_exact.sum().alias("exact")).collect()
        every += int(counts["all"].item())
        exact += int(counts["exact"].item())
        if exact * FLOW_BYTES > detail.budget_left:
            break  # not even the arrows between exact lanes fit (nor then all): the page holds none
    whole = every * FLOW_BYTES <= detail.budget_left
    keep = pl.lit(True) if whole else between_exact
    if whole or exact * FLOW_BYTES <= detail.budget_left:
        parts = [placed.filter(keep).collect() for placed in _placed_batches(flows, lanes)]
        held = pl.concat(parts)
    else:
        held = placed_flows(flows.head(0), lanes).collect()
    # Sorted by time as read, ties in the table's order.
    return held.sort(["from_time", "_row"]), whole


def _flows(df: pl.DataFrame, blob: _Blob, origin: int) -> dict[str, Any]:
    """The arrows DF (``_kept_flows``) as a typed-array table."""
    return blob.table(
        df.height,
        {
            "from": (df["from_time"].to_numpy() - origin, "f8"),
            "to": (df["to_time"].to_numpy() - origin, "f8"),
            "from_lane": (df["from_lane"].to_numpy(), "i4"),
            "to_lane": (df["to_lane"].to_numpy(), "i4"),
        },
    )


def _placed_batches(flows: pl.LazyFrame, lanes: list[Lane]) -> Iterator[pl.LazyFrame]:
    """``placed_flows`` of FLOWS a batch at a time, ``_row`` numbered across the batches."""
    row = 0
    for part in frame_batches(flows, where=pl.col("to_time") >= 0, columns=PLACED_COLUMNS):
        yield placed_flows(part.lazy(), lanes).with_columns(pl.col("_row").cast(pl.Int64) + row)
        row += part.height


def _stack_table(tl: Timeline, ids: np.ndarray, blob: _Blob) -> dict[str, Any]:
    """Stacks IDS (sorted) as an interned table: distinct frames once, stacks as frame lists.

    Stack k of the page is ``frame[first[k]:first[k + 1]]``, leaf first; a frame is
    (func, file, line) with string ids.  Goroutines of one program share most frames,
    so this is far smaller than repeating the frames of every stack.
    """
    df = tl.stack_frames.filter(pl.col("stack").is_in(ids.astype(np.uint32).tolist())).sort(
        ["stack", "depth"]
    )
    stack_col = df["stack"].to_numpy().astype(np.int64)
    triples = (
        np.stack([df["func"].to_numpy(), df["file"].to_numpy(), df["line"].to_numpy()], axis=1)
        .astype(np.int64)
        .reshape(-1, 3)
    )
    frames, frame_of_row = np.unique(triples, axis=0, return_inverse=True)
    counts = (
        np.bincount(np.searchsorted(ids, stack_col), minlength=len(ids))
        if len(ids)
        else np.zeros(0, np.int64)
    )
    first = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return {
        "n": len(ids),
        "frames": len(frames),
        "arrays": {
            "first": blob.add(first, "u4"),
            "frame": blob.add(frame_of_row.ravel(), "u4"),
            "func": blob.add(frames[:, 0] if len(frames) else frames, "i4"),
            "file": blob.add(frames[:, 1] if len(frames) else frames, "i4"),
            "line": blob.add(frames[:, 2] if len(frames) else frames, "i4"),
        },
    }


def embed_json(value: Any) -> str:
    """JSON that is safe inside a <script> element: it contains no '<', '>' or '&' at all."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), sort_keys=True, allow_nan=False)
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group(0)], text)


def render_timeline_html(tl: Timeline, title: str = "", compress: bool = True) -> str:
    """The whole page of TL, a Timeline held in memory, as text (see ``page_html``)."""
    with memory_tables(tl) as tables:
        return page_html(tables, title, compress)


def page_html(tables: PageTables, title: str = "", compress: bool = True, *, served: bool = False) -> str:
    """The whole page as text (see ``build_page``)."""
    return build_page(tables, title, compress, served=served).text()


@dataclass
class Page:
    """A page made and ready to write: the template's parts, the blob's bytes in pieces."""

    parts: dict[str, str]
    blob: list[bytes]  # gzip-compressed (or raw) pieces, base64-encoded as written

    def write(self, out: BinaryIO) -> None:
        """The page's bytes (UTF-8) to OUT a part at a time: the page is never one string.

        One pass over the template, so nothing substituted is ever scanned for placeholders.
        """
        template = _asset("timeline.html")
        at = 0
        for m in _PLACEHOLDER.finditer(template):
            out.write(template[at : m.start()].encode("utf-8"))
            if m.group(1) == "BLOB":
                _write_base64(out, self.blob)
            else:
                out.write(self.parts[m.group(1)].encode("utf-8"))
            at = m.end()
        out.write(template[at:].encode("utf-8"))

    def bytes(self) -> bytes:
        buf = io.BytesIO()
        self.write(buf)
        return buf.getvalue()

    def text(self) -> str:
        return self.bytes().decode("utf-8")


def build_page(tables: PageTables, title: str = "", compress: bool = True, *, served: bool = False) -> Page:
    """The page of TABLES.  Deterministic: the same timeline gives the same bytes.

    Everything is read and made before a byte is written (``Page.write``), so a failure
    leaves no partial page behind.  SERVED: the page of ``trace view`` (see
    ``tables_payload``), allowed to fetch its tiles from where it came from.
    """
    blob = _Blob(compress)
    header = _payload(tables, title, blob, served=served)
    pieces = blob.finish()
    header["blob"] = {"codec": "gzip" if compress else "raw", "size": blob.size}
    parts = {
        "CONNECT": "connect-src 'self'; " if served else "",
        "TITLE": html.escape(f"{title} · goblueprint timeline" if title else "goblueprint timeline"),
        "CSS": _asset("timeline.css"),
        "JS": _asset("timeline.js"),
        "HEADER": embed_json(header),
    }
    return Page(parts, pieces)


def _write_base64(out: BinaryIO, pieces: list[bytes]) -> None:
    """base64 of the concatenation of PIECES, written a slice at a time: each slice a whole
    number of 3-byte groups (no padding inside), the remainder carried to the next piece."""
    carry = b""
    for piece in pieces:
        view = memoryview(piece)
        if carry:
            take = min(len(view), 3 - len(carry))
            carry += bytes(view[:take])
            view = view[take:]
            if len(carry) < 3:
                continue
            out.write(base64.b64encode(carry))
            carry = b""
        whole = len(view) - len(view) % 3
        for lo in range(0, whole, _B64_SLICE):
            out.write(base64.b64encode(view[lo : min(whole, lo + _B64_SLICE)]))
        carry = bytes(view[whole:])
    out.write(base64.b64encode(carry))


def _asset(name: str) -> str:
    return resources.files("goblueprint.render").joinpath(name).read_text(encoding="utf-8")
