"""How a Timeline's lanes are arranged on screen: groups, order, names.

Shared by the HTML viewer, the SVG Gantt chart and the exports so that every view
shows the same rows in the same order.  Pure data: no I/O, no formatting.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from goblueprint.timeline.model import STATE_NAMES, LaneKind, Timeline

# Display groups, top to bottom: (key, title, lane kinds, folded at first).
# System goroutines get a folded group of their own: they are rarely what one looks for.
GROUPS: tuple[tuple[str, str, tuple[LaneKind, ...], bool], ...] = (
    ("GC", "GC & stop-the-world", (LaneKind.GC, LaneKind.STW), False),
    ("P", "Procs", (LaneKind.P,), False),
    ("M", "Threads", (LaneKind.M,), False),
    ("G", "Goroutines", (LaneKind.G,), False),
    ("SYS", "System goroutines", (LaneKind.G,), True),
    ("GRANGE", "Goroutine ranges (mark assist…)", (LaneKind.GRANGE,), False),
    ("PRANGE", "Proc ranges (sweep…)", (LaneKind.PRANGE,), False),
    ("REGION", "User regions", (LaneKind.REGION,), False),
    ("TASK", "User tasks", (LaneKind.TASK,), False),
)
COUNTER_GROUP = "Counters"

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
    info: dict[tuple[int, int], tuple[str, str, bool]] = {}
    for kind, lane_id, label, group, system in tl.lanes.iter_rows():
        info[(int(kind), int(lane_id))] = (label, group, bool(system))
    keys = set(ranges) | set(info)
    lanes: list[Lane] = []
    for key, title, lane_kinds, _folded in GROUPS:
        members = []
        for kind, lane_id in keys:
            if kind not in lane_kinds:
                continue
            label, function, system = info.get((kind, lane_id), ("", "", False))
            if kind == LaneKind.G and (key == "SYS") != system:
                continue
            lo, hi = ranges.get((kind, lane_id), (0, 0))
            name = label or _default_name(LaneKind(kind), lane_id)
            members.append(Lane(LaneKind(kind), lane_id, name, function, key, lo, hi))
        members.sort(key=lambda lane: (lane.kind, lane.lane_id))
        lanes.extend(members)
        del title
    return lanes


def _default_name(kind: LaneKind, lane_id: int) -> str:
    if kind in (LaneKind.GC, LaneKind.STW):
        return _KIND_PREFIX[kind]
    return f"{_KIND_PREFIX[kind]}{lane_id}"
