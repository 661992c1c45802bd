"""The timeline viewer served from 127.0.0.1, its detail read from the ingested tables on demand.

``GET /`` is the same page as ``trace timeline`` writes, holding level 0 of every lane;
``GET /tile?lanes=I,J&from=T0&to=T1&level=K`` answers, for the page's lanes I, J (display
order) and the window [T0, T1) in ns since the trace start, each lane's exact spans when
the window holds at most ``detail_store.EXACT_LIMIT`` of them, else its runs at level K.
The answer is JSON: ``strings`` and ``stacks`` local to the tile (labels and stacks index
them) and per lane ``exact`` (columns of spans) or ``runs`` (columns of runs).
``GET /flows?from=T0&to=T1`` answers the wake-up arrows that overlap the window (from
before T1, to at or after T0), placed on the page's lanes as the page places its own
(render.flow_lanes), when there are at most ``MAX_FLOWS`` of them; else only their count.
``GET /search?q=TEXT`` answers the goroutines (from the ingested goroutines table) whose id
is TEXT, or whose start function or one of whose block reasons contains it (case
ignored): the page holds no spans, so "chan send" finds the goroutines that blocked so.

Nothing of the trace is held but the page: every tile is read from the stored levels and
the ingested spans table with predicate pushdown (timeline.detail_store).  A bad request
gets 400 and a one-line JSON error, never a traceback.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.errors import GoblueprintError
from goblueprint.render.flow_lanes import placed_flows
from goblueprint.render.lanes import Lane, arrange_counted, sorted_spans, state_names
from goblueprint.render.levels import lane_keys
from goblueprint.render.timeline_html import build_page, span_fields
from goblueprint.timeline.detail_store import EXACT_LIMIT, DetailStore, ingested_tables
from goblueprint.timeline.ingest import Ingested
from goblueprint.timeline.model import LaneKind, Timeline

MAX_TILE_LANES = 256  # lanes of one tile request, at most
# Arrows of one window, at most: the viewer draws no more than 3000 at once, and asks for
# about three views' worth.
MAX_FLOWS = 10_000
MAX_HITS = 500  # goroutines of one search answer, at most (the count says how many matched)


class BadRequest(GoblueprintError):
    """A tile request the server cannot answer as asked (HTTP 400)."""


@dataclass
class ServedTrace:
    """What the server keeps: the page, the lanes, and where the tables are."""

    store: DetailStore
    light: Timeline  # strings, lanes, stack frames: no spans
    lanes: list[Lane]
    keys: pl.DataFrame  # lane_kind, lane_id, lane (display index)
    page: bytes
    flows_file: Path  # the ingested flows table (its SQL form: the columns flows() reads are the same)
    goroutines_file: Path  # the ingested goroutines table (Go's goroutine summary)


def prepare(found: Ingested, title: str) -> ServedTrace:
    """The served page of FOUND (level 0 of every lane, bounded like any page) and its store."""
    tables = ingested_tables(found)
    lanes = arrange_counted(tables.light, tables.store.span_counts())
    page = build_page(tables, title, served=True).bytes()
    return ServedTrace(
        store=tables.store,
        light=tables.light,
        lanes=lanes,
        keys=lane_keys(lanes),
        page=page,
        flows_file=found.timeline_file("flows"),
        goroutines_file=found.path / "goroutines.parquet",
    )


def _int(query: dict[str, list[str]], name: str, what: str = "tile") -> int:
    values = query.get(name)
    if not values or len(values) != 1:
        raise BadRequest(f"{what}: give one {name}=")
    try:
        return int(values[0])
    except ValueError:
        raise BadRequest(f"{what}: {name}={values[0]!r} is not an integer") from None


def parse_window(view: ServedTrace, query_text: str, what: str) -> tuple[int, int]:
    """(from, to) of a query string holding only from= and to=, or BadRequest."""
    query = parse_qs(query_text, keep_blank_values=True, strict_parsing=False)
    unknown = sorted(set(query) - {"from", "to"})
    if unknown:
        raise BadRequest(f"{what}: unknown parameter {unknown[0]!r} (from, to)")
    t_from, t_to = _int(query, "from", what), _int(query, "to", what)
    if not 0 <= t_from < t_to:
        raise BadRequest(f"{what}: the window [{t_from}, {t_to}) must have 0 <= from < to")
    return t_from, min(t_to, view.store.duration)


def parse_search(query_text: str) -> str:
    """The search text of a query string, or BadRequest."""
    query = parse_qs(query_text, keep_blank_values=True, strict_parsing=False)
    unknown = sorted(set(query) - {"q"})
    if unknown:
        raise BadRequest(f"search: unknown parameter {unknown[0]!r} (q)")
    values = query.get("q", [])
    if len(values) != 1 or not values[0].strip():
        raise BadRequest("search: give one non-empty q=")
    return values[0].strip()


def search(view: ServedTrace, text: str) -> dict[str, Any]:
    """The search answer (see the module doc), goroutines by id, at most MAX_HITS of them."""
    needle = text.lower()

    def has(column: pl.Expr) -> pl.Expr:
        return column.str.to_lowercase().str.contains(needle, literal=True)

    matched = (
        has(pl.col("name")) | pl.col("block").list.eval(has(pl.element().struct.field("reason"))).list.any()
    )
    if text.isdigit():
        matched = matched | (pl.col("id") == int(text))
    lf = pl.scan_parquet(view.goroutines_file).filter(matched)
    n = int(lf.select(pl.len()).collect().item())
    rows = (
        lf.sort("id")
        .head(MAX_HITS)
        .select(
            "id",
            "name",
            "start_time",
            "end_time",
            pl.col("block")
            .list.eval(pl.element().filter(has(pl.element().struct.field("reason"))))
            .alias("hit"),
        )
        .collect()
        .join(view.keys.filter(pl.col("lane_kind") == int(LaneKind.G)), left_on="id", right_on="lane_id")
        .sort("id")
    )
    origin = view.store.origin
    hits = [
        {
            "lane": int(row["lane"]),
            "gid": int(row["id"]),
            "name": row["name"],
            # Go's summary gives 0 for a time outside the trace (started before, still running).
            "from": max(0, int(row["start_time"]) - origin),
            "to": int(row["end_time"]) - origin if row["end_time"] > origin else view.store.duration,
            "reasons": {h["reason"]: int(h["ns"]) for h in row["hit"]},
        }
        for row in rows.iter_rows(named=True)
    ]
    return {"q": text, "n": n, "hits": hits}


def flows(view: ServedTrace, t_from: int, t_to: int) -> dict[str, Any]:
    """The flows answer (see the module doc): the table is scanned with the window as a
    predicate, so only row groups that can hold its arrows are read."""
    a, b = view.store.origin + t_from, view.store.origin + t_to
    scan = pl.scan_parquet(view.flows_file).filter((pl.col("from_time") < b) & (pl.col("to_time") >= a))
    placed = placed_flows(scan, view.lanes)
    n = int(placed.select(pl.len()).collect(engine="streaming").item())
    out: dict[str, Any] = {"from": t_from, "to": t_to, "n": n, "flows": None}
    if n <= MAX_FLOWS:
        df = placed.collect().sort(["from_time", "_row"])
        origin = view.store.origin
        out["flows"] = {
            "from": (df["from_time"] - origin).to_list(),
            "to": (df["to_time"] - origin).to_list(),
            "from_lane": df["from_lane"].to_list(),
            "to_lane": df["to_lane"].to_list(),
        }
    return out


def parse_tile(view: ServedTrace, query_text: str) -> tuple[list[int], int, int, int]:
    """(lanes, level, from, to) of a tile query string, or BadRequest saying what is wrong."""
    query = parse_qs(query_text, keep_blank_values=True, strict_parsing=False)
    unknown = sorted(set(query) - {"lanes", "level", "from", "to"})
    if unknown:
        raise BadRequest(f"tile: unknown parameter {unknown[0]!r} (lanes, level, from, to)")
    level, t_from, t_to = _int(query, "level"), _int(query, "from"), _int(query, "to")
    count = view.store.levels.count
    if not 0 <= level < count:
        raise BadRequest(f"tile: level {level} is not in 0..{count - 1}")
    if not 0 <= t_from < t_to:
        raise BadRequest(f"tile: the window [{t_from}, {t_to}) must have 0 <= from < to")
    if t_from >= view.store.duration:
        raise BadRequest(f"tile: from={t_from} is past the trace's end ({view.store.duration} ns)")
    raw = query.get("lanes", [""])
    if len(raw) != 1 or not raw[0]:
        raise BadRequest("tile: give lanes=I,J,... (display indexes)")
    try:
        lanes = sorted({int(x) for x in raw[0].split(",")})
    except ValueError:
        raise BadRequest(f"tile: lanes={raw[0]!r} is not a list of integers") from None
    if len(lanes) > MAX_TILE_LANES:
        raise BadRequest(f"tile: {len(lanes)} lanes asked, at most {MAX_TILE_LANES} per tile")
    if lanes[0] < 0 or lanes[-1] >= len(view.lanes):
        raise BadRequest(f"tile: lane indexes run 0..{len(view.lanes) - 1}")
    return lanes, level, t_from, min(t_to, view.store.duration)


def tile(view: ServedTrace, lanes: list[int], level: int, t_from: int, t_to: int) -> dict[str, Any]:
    """The tile's JSON (see the module doc)."""
    store = view.store
    keys = view.keys.filter(pl.col("lane").is_in(lanes))
    counts = keys.join(store.window_counts(keys, t_from, t_to), on=["lane_kind", "lane_id"], how="left")
    few = counts.filter(pl.col("n").fill_null(0) <= EXACT_LIMIT)
    many = counts.filter(pl.col("n").fill_null(0) > EXACT_LIMIT)
    strings: dict[str, int] = {}

    def intern(text: str) -> int:
        return strings.setdefault(text, len(strings))

    out_lanes: list[dict[str, Any]] = []
    stacks: list[list[list[Any]]] = []
    if few.height:
        spans = sorted_spans(replace_spans(view.light, store.spans(few, t_from, t_to)))
        out_lanes += _exact(view, spans, few, intern, stacks, store.origin)
    if many.height:
        out_lanes += _runs(view, store.runs(many, level, t_from, t_to), many, level)
    out_lanes.sort(key=lambda lane: lane["lane"])
    return {
        "level": level,
        "from": t_from,
        "to": t_to,
        "strings": list(strings),
        "stacks": stacks,
        "lanes": out_lanes,
    }


def replace_spans(tl: Timeline, spans: pl.DataFrame) -> Timeline:
    return replace(tl, spans=spans)


def _exact(
    view: ServedTrace,
    spans: pl.DataFrame,
    few: pl.DataFrame,
    intern: Any,
    stacks: list[list[list[Any]]],
    origin: int,
) -> list[dict[str, Any]]:
    _names, code_to_index = state_names()
    label, gid, start_stack, end_stack = span_fields(view.light, spans, view.lanes, intern)
    used = unique(np.concatenate((start_stack, end_stack)))
    used = used[used != 0]
    for sid in used.tolist():
        stacks.append([list(frame) for frame in view.light.stack(int(sid))])
    dense = {int(sid): k for k, sid in enumerate(used.tolist())}

    def stack_ids(raw: np.ndarray) -> list[int]:
        return [dense.get(int(x), -1) for x in raw.tolist()]

    # Row for row with SPANS: a join keeps its left side's order only when asked to.
    lane_of = spans.join(
        few.select("lane_kind", "lane_id", "lane"),
        on=["lane_kind", "lane_id"],
        how="left",
        maintain_order="left",
    )["lane"].to_numpy()
    out = []
    present = set()
    if len(lane_of):
        change = np.flatnonzero(lane_of[1:] != lane_of[:-1]) + 1
        bounds = np.concatenate(([0], change, [len(lane_of)]))
        state = code_to_index[spans["state"].to_numpy()]
        start = spans["start"].to_numpy() - origin
        end = spans["end"].to_numpy() - origin
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            lane = int(lane_of[lo])
            present.add(lane)
            out.append(
                {
                    "lane": lane,
                    "exact": {
                        "start": start[lo:hi].tolist(),
                        "end": end[lo:hi].tolist(),
                        "label": label[lo:hi].tolist(),
                        "state": state[lo:hi].tolist(),
                        "gid": gid[lo:hi].tolist(),
                        "stack": stack_ids(start_stack[lo:hi]),
                        "end_stack": stack_ids(end_stack[lo:hi]),
                    },
                }
            )
    empty = {"start": [], "end": [], "label": [], "state": [], "gid": [], "stack": [], "end_stack": []}
    out += [{"lane": lane, "exact": empty} for lane in few["lane"].to_list() if lane not in present]
    return out


def _runs(view: ServedTrace, rows: pl.DataFrame, many: pl.DataFrame, level: int) -> list[dict[str, Any]]:
    _names, code_to_index = state_names()
    width = view.store.levels.width(level)
    rows = rows.join(many.select("lane_kind", "lane_id", "lane"), on=["lane_kind", "lane_id"]).sort(
        ["lane", "b0"]
    )
    out = []
    for (lane,), part in rows.group_by("lane", maintain_order=True):
        out.append(
            {
                "lane": int(lane),
                "runs": {
                    "from": int(part["b0"].min()) * width,
                    "to": int(part["b1"].max()) * width,
                    "b0": part["b0"].to_list(),
                    "b1": part["b1"].to_list(),
                    "state": code_to_index[part["state"].to_numpy()].tolist(),
                    "fill": part["fill"].to_list(),
                },
            }
        )
    return out


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        view = self.server.view
        if url.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", view.page)
            return
        if url.path not in ("/tile", "/flows", "/search"):
            self._error(
                HTTPStatus.NOT_FOUND,
                f"no such page {url.path!r}: / is the viewer, /tile its tiles, /flows its arrows, "
                "/search its goroutines",
            )
            return
        try:
            if url.path == "/search":
                body = search(view, parse_search(url.query))
            elif url.path == "/flows":
                body = flows(view, *parse_window(view, url.query, "flows"))
            else:
                body = tile(view, *parse_tile(view, url.query))
        except BadRequest as exc:
            self._error(HTTPStatus.BAD_REQUEST, str(exc))
            return
        except (GoblueprintError, OSError, pl.exceptions.PolarsError) as exc:
            # The tables went away or broke under the server: say so, keep serving.
            self._error(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                f"{url.path[1:]}: {type(exc).__name__}: {exc}".splitlines()[0],
            )
            return
        data = json.dumps(body, separators=(",", ":")).encode("utf-8")
        self._send(HTTPStatus.OK, "application/json", data)

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._send(status, "application/json", json.dumps({"error": message}).encode("utf-8"))

    def _send(self, status: HTTPStatus, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            print(f"goblueprint: {self.address_string()} {format % args}", file=sys.stderr)


class ViewServer(HTTPServer):
    """One request at a time: a tile's memory is all the server holds beyond the page."""

    def __init__(self, view: ServedTrace, host: str, port: int, *, verbose: bool = False) -> None:
        self.view = view
        self.verbose = verbose
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else host
        return f"http://{shown}:{port}/"
