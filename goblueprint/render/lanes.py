"""How a Timeline's lanes are arranged on screen: groups, order, names.

Shared by the HTML viewer, the SVG Gantt chart and the exports so that every view
shows the same rows in the same order.  Pure data: no I/O, no formatting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.timeline.model import STATE_NAMES, LaneKind, Timeline

# Display groups, top to bottom: (key, title, lane kinds, folded at first).
# System goroutines get a folded group of their own: they are rarely what one looks for.
GROUPS: tuple[tuple[str, str, tuple[LaneKind, ...], bool], ...] = (
    ("GC", "GC & stop-the-world", (LaneKind.GC, LaneKind.STW), False),
    ("P", "Procs", (LaneKind.P,), False),
    # A thread's kernel lanes (goblueprint.kernel) sit right under its M lane.
    ("M", "Threads", (LaneKind.M, LaneKind.KERNEL, LaneKind.KMARK), False),
    ("CPU", "CPU cores (kernel)", (LaneKind.CPU,), False),
    ("G", "Goroutines", (LaneKind.G,), False),
    ("SYS", "System goroutines", (LaneKind.G,), True),
    ("GRANGE", "Goroutine ranges (mark assist…)", (LaneKind.GRANGE,), False),
    ("PRANGE", "Proc ranges (sweep…)", (LaneKind.PRANGE,), False),
    ("REGION", "User regions", (LaneKind.REGION,), False),
    ("TASK", "User tasks", (LaneKind.TASK,), False),
)
COUNTER_GROUP = "Counters"
# A counter named "Proc 3: run queue" or "Thread 7: ..." belongs to that P's (M's) lane and
# is drawn directly under it; other counters (runtime/metrics, derived totals) sit in the
# shared counter group. Go's metric names start with "/", so they never match.
_LANE_COUNTER = re.compile(r"^(Proc|Thread) (\d+): .+$")
_COUNTER_LANE_KINDS = {"Proc": LaneKind.P, "Thread": LaneKind.M}

_KIND_PREFIX = {
    LaneKind.G: "G",
    LaneKind.P: "Proc ",
    LaneKind.M: "Thread ",
    LaneKind.GC: "GC",
    LaneKind.STW: "STW",
    LaneKind.GRANGE: "G",
    LaneKind.PRANGE: "Proc ",
    LaneKind.REGION: "regions G",
    LaneKind.TASK: "task ",
    LaneKind.KERNEL: "kernel: thread ",
    LaneKind.KMARK: "Go vs kernel: thread ",
    LaneKind.CPU: "CPU ",
}


@dataclass(frozen=True)
class Lane:
    kind: LaneKind
    lane_id: int
    name: str  # display name, untrusted text inside (function names)
    function: str  # start function of a goroutine, "" otherwise
    group: str  # key into GROUPS
    lo: int  # rows [lo, hi) of the sorted spans table
    hi: int


def state_names() -> tuple[list[str], np.ndarray]:
    """Distinct state names and a 256-entry map from State code to index in that list."""
    names: list[str] = []
    code_to_index = np.zeros(256, dtype=np.uint8)
    for code, name in STATE_NAMES.items():
        if name not in names:
            names.append(name)
        code_to_index[int(code)] = names.index(name)
    return names, code_to_index


def sorted_spans(tl: Timeline):
    """The spans table sorted the way every view walks it: by lane, then by start, longest first."""
    return tl.spans.sort(["lane_kind", "lane_id", "start", "end"], descending=[False, False, False, True])


def arrange(tl: Timeline, spans=None) -> list[Lane]:
    """The lanes to show, in display order, each with its row range in ``sorted_spans``.

    Lanes with instants but no spans (a goroutine seen only in a log) are kept, empty.
    """
    if spans is None:
        spans = sorted_spans(tl)
    kinds = spans["lane_kind"].to_numpy()
    ids = spans["lane_id"].to_numpy()
    ranges: dict[tuple[int, int], tuple[int, int]] = {}
    if len(kinds):
        change = np.flatnonzero((kinds[1:] != kinds[:-1]) | (ids[1:] != ids[:-1])) + 1
        starts = np.concatenate(([0], change))
        ends = np.concatenate((change, [len(kinds)]))
        for lo, hi in zip(starts.tolist(), ends.tolist(), strict=True):
            ranges[(int(kinds[lo]), int(ids[lo]))] = (lo, hi)
    return _arranged(tl, ranges)


def arrange_counted(tl: Timeline, counts: pl.DataFrame) -> list[Lane]:
    """The lanes of ``arrange`` from the spans per lane (COUNTS: lane_kind, lane_id, n), so
    the spans need not be held: a lane's rows in ``sorted_spans`` follow from the counts of
    the lanes before it in (lane_kind, lane_id) order."""
    counts = counts.filter(pl.col("n") > 0).sort(["lane_kind", "lane_id"])
    hi = counts["n"].cum_sum().to_list()
    ranges = {
        (int(kind), int(lane_id)): (end - int(n), end)
        for kind, lane_id, n, end in zip(
            counts["lane_kind"].to_list(), counts["lane_id"].to_list(), counts["n"].to_list(), hi, strict=True
        )
    }
    return _arranged(tl, ranges)


def _arranged(tl: Timeline, ranges: dict[tuple[int, int], tuple[int, int]]) -> list[Lane]:
    info: dict[tuple[int, int], tuple[str, str, bool]] = {}
    for kind, lane_id, label, group, system in tl.lanes.iter_rows():
        info[(int(kind), int(lane_id))] = (label, group, bool(system))
    # Each group looks at the lanes of its kinds only (not every lane once per group).
    by_kind: dict[int, list[int]] = {}
    for kind, lane_id in set(ranges) | set(info):
        by_kind.setdefault(kind, []).append(lane_id)
    lanes: list[Lane] = []
    for key, title, lane_kinds, _folded in GROUPS:
        members = []
        for kind, lane_id in ((int(k), i) for k in lane_kinds for i in by_kind.get(int(k), ())):
            label, function, system = info.get((kind, lane_id), ("", "", False))
            if kind == LaneKind.G and (key == "SYS") != system:
                continue
            lo, hi = ranges.get((kind, lane_id), (0, 0))
            name = label or _default_name(LaneKind(kind), lane_id)
            members.append(Lane(LaneKind(kind), lane_id, name, function, key, lo, hi))
        if key == "M":
            members.sort(key=lambda lane: (lane.lane_id, lane.kind))
        else:
            members.sort(key=lambda lane: (lane.kind, lane.lane_id))
        lanes.extend(members)
        del title
    return lanes


def lane_counter_name(kind: LaneKind, lane_id: int, what: str) -> str:
    """The name that puts a counter under lane (KIND, LANE_ID): see ``counter_lanes``."""
    return f"{_KIND_PREFIX[kind]}{lane_id}: {what}"


def counter_lanes(tl: Timeline) -> dict[int, tuple[LaneKind, int]]:
    """Counter name (string id) -> the P or M lane it belongs to, for counters named after one."""
    return counter_owners(tl.counters["name"].unique().to_list(), tl.strings)


def counter_owners(names: list[int], strings: list[str]) -> dict[int, tuple[LaneKind, int]]:
    """``counter_lanes`` of the counters NAMES (string ids into STRINGS)."""
    out: dict[int, tuple[LaneKind, int]] = {}
    for sid in names:
        m = _LANE_COUNTER.match(strings[int(sid)])
        if m:
            out[int(sid)] = (_COUNTER_LANE_KINDS[m.group(1)], int(m.group(2)))
    return out


def _default_name(kind: LaneKind, lane_id: int) -> str:
    if kind in (LaneKind.GC, LaneKind.STW):
        return _KIND_PREFIX[kind]
    return f"{_KIND_PREFIX[kind]}{lane_id}"


def span_titles(tl: Timeline, spans, lanes: list[Lane]) -> tuple[np.ndarray, list[str]]:
    """One short title per span, as an index into a list of distinct titles.

    G lanes: the state, with Go's block reason ("waiting: chan receive").  P and M
    lanes: the goroutine they run, named as its lane is ("G17 main.worker").  Other
    lanes: their label (STW reason, region type...), else the state.
    """
    key = title_keys(spans)
    if len(key) == 0:
        return np.zeros(0, dtype=np.int64), []
    # Hashed distinct keys, then a binary search among those few: no sort of every span.
    uniq = unique(key)
    inverse = np.searchsorted(uniq, key)
    return inverse.astype(np.int64).ravel(), key_titles(tl, uniq, lanes)


def title_keys(spans) -> np.ndarray:
    """Per span of SPANS, what its title (``span_titles``) is made of, packed in one int64:
    spans with equal keys have equal titles, and the keys of spans read a few lanes at a
    time can be gathered and named at once (``key_titles``)."""
    _names, code_to_index = state_names()
    kinds = spans["lane_kind"].to_numpy()
    g = spans["g"].to_numpy()
    label = spans["label"].to_numpy().astype(np.int64)
    state = code_to_index[spans["state"].to_numpy()].astype(np.int64)
    on_pm = ((kinds == LaneKind.P) | (kinds == LaneKind.M)) & (g >= 0)
    on_g = kinds == LaneKind.G
    # key: (form, state, value) packed into one int64 so np.unique can do the grouping.
    form = np.where(on_pm, 2, np.where(on_g, 1, 0))
    value = np.where(on_pm, g, label)
    return ((form << 60) | (state << 52) | (value & ((1 << 52) - 1))).astype(np.int64)


def key_titles(tl: Timeline, keys: np.ndarray, lanes: list[Lane]) -> list[str]:
    """The title of each of KEYS (``title_keys``), in their order."""
    names, _code_to_index = state_names()
    g_names = {lane.lane_id: lane.name for lane in lanes if lane.kind == LaneKind.G}
    titles = []
    for k in keys.tolist():
        f, s, v = k >> 60, (k >> 52) & 0xFF, k & ((1 << 52) - 1)
        if f == 2:
            titles.append(g_names.get(v, f"G{v}"))
        elif f == 1:
            titles.append(f"{names[s]}: {tl.strings[v]}" if v else names[s])
        else:
            titles.append(tl.strings[v] if v else names[s])
    return titles


def layers(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Assign spans (sorted by start, longest first) to layers in which they nest properly.

    Tools that draw slices as a stack (Perfetto, Chrome) need every slice of a track to
    be inside or after the previous ones; partially overlapping spans go one layer down.
    """
    n = len(starts)
    out = np.zeros(n, dtype=np.int64)
    if n < 2:
        return out
    running_max = np.maximum.accumulate(ends)
    if (starts[1:] >= running_max[:-1]).all():
        return out  # disjoint: the common case, one layer
    stacks: list[list[int]] = []  # per layer, the ends of the open (enclosing) spans
    for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        for depth, open_ends in enumerate(stacks):
            while open_ends and open_ends[-1] <= s:
                open_ends.pop()
            if not open_ends or e <= open_ends[-1]:
                open_ends.append(e)
                out[i] = depth
                break
        else:
            stacks.append([e])
            out[i] = len(stacks) - 1
    return out
