"""What a simulation did, as the trace side's Timeline columns and a decision table.

The engine reports state changes of Gs, Ps and Ms, causal flows and decisions;
this module keeps them as plain column lists (no object per event) and turns
them into ``goblueprint.timeline.model.Timeline`` tables at the end, so every
trace view and metric reads a simulation as it reads a real trace.
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np
import polars as pl

from goblueprint.timeline.model import NONE, FlowKind, InstantKind, LaneKind, State, Timeline, frame

G_RUN, G_RUNNABLE, G_WAIT, G_SYS = (int(State.G_RUNNING), int(State.G_RUNNABLE), int(State.G_WAITING),
                                    int(State.G_SYSCALL))  # fmt: skip
P_RUN, P_IDLE, P_STOP = int(State.P_RUNNING), int(State.P_IDLE), int(State.P_STOPPED)
M_RUN, M_SYS, M_IDLE = int(State.M_RUNNING), int(State.M_SYSCALL), int(State.M_IDLE)

SPAN_COLUMNS = ("lane_kind", "lane_id", "start", "end", "state", "g", "p", "m", "label")
DECISIONS_SCHEMA: dict[str, Any] = {
    "id": pl.Int64,
    "time": pl.Int64,
    "p": pl.Int64,
    "point": pl.String,
    "chosen": pl.String,
    "reason": pl.String,
    "alternatives": pl.String,
}


class Recorder:
    """Open spans per lane and closed spans as columns."""

    def __init__(self, decisions: bool) -> None:
        self.strings: list[str] = [""]
        self._sid: dict[str, int] = {"": 0}
        # Closed spans, SPAN_COLUMNS int64s each, one after the other: one C-level extend per span
        # (a replay closes millions) and 8 bytes a value instead of a Python int per value.
        self.spans = array("q")
        # open span per (lane kind, lane id): (start, (state, g, p, m, label))
        self.open: dict[tuple[int, int], tuple[int, tuple[int, int, int, int, int]]] = {}
        self.flows: dict[str, list[int]] = {k: [] for k in ("kind", "g", "from_g", "from_p", "from_time",
                                                             "to_p", "to_m", "to_time", "label")}  # fmt: skip
        self.counters: dict[str, list[Any]] = {"name": [], "time": [], "value": []}
        self.keep_decisions = decisions
        self.dec: dict[str, list[Any]] = {k: [] for k in DECISIONS_SCHEMA}
        self.decision_count = 0
        self.g_names: dict[int, tuple[str, bool]] = {}
        self.procs_changes: list[tuple[int, int]] = []  # (time, GOMAXPROCS) after the start

    def gomaxprocs(self, t: int, n: int) -> None:
        self.procs_changes.append((t, n))

    def sid(self, text: str) -> int:
        got = self._sid.get(text)
        if got is None:
            got = self._sid[text] = len(self.strings)
            self.strings.append(text)
        return got

    def state(self, lk: int, lid: int, t: int, state: int, g: int = NONE, p: int = NONE, m: int = NONE,
              label: int = 0) -> None:  # fmt: skip
        key = (lk, lid)
        val = (state, g, p, m, label)
        cur = self.open.get(key)
        if cur is not None:
            if cur[1] == val:
                return  # nothing changed: the span goes on
            if t > cur[0]:  # zero-length: a state entered and left at one instant says nothing
                self.spans.extend((lk, lid, cur[0], t, *cur[1]))
        self.open[key] = (t, val)

    def end(self, lk: int, lid: int, t: int) -> None:
        cur = self.open.pop((lk, lid), None)
        if cur is not None and t > cur[0]:
            self.spans.extend((lk, lid, cur[0], t, *cur[1]))

    def flow(self, kind: int, g: int, from_g: int, from_p: int, from_time: int, label: int) -> int:
        """A flow whose end (to_p, to_m, to_time) is filled when G next runs; returns its row."""
        f = self.flows
        f["kind"].append(kind)
        f["g"].append(g)
        f["from_g"].append(from_g)
        f["from_p"].append(from_p)
        f["from_time"].append(from_time)
        f["to_p"].append(NONE)
        f["to_m"].append(NONE)
        f["to_time"].append(NONE)
        f["label"].append(label)
        return len(f["kind"]) - 1

    def flow_end(self, row: int, p: int, m: int, t: int) -> None:
        self.flows["to_p"][row] = p
        self.flows["to_m"][row] = m
        self.flows["to_time"][row] = t

    def decision(self, t: int, p: int, point: str, chosen: str, reason: str, alternatives: str) -> None:
        self.decision_count += 1
        if self.keep_decisions:
            d = self.dec
            d["id"].append(self.decision_count)
            d["time"].append(t)
            d["p"].append(p)
            d["point"].append(point)
            d["chosen"].append(chosen)
            d["reason"].append(reason)
            d["alternatives"].append(alternatives)

    def decisions(self) -> pl.DataFrame:
        return pl.DataFrame(self.dec, schema=DECISIONS_SCHEMA)

    def timeline(self, start: int, end: int, procs: int) -> Timeline:
        """The run's Timeline: its open spans end at END."""
        for key in sorted(self.open):
            self.end(*key, end)
        c = np.frombuffer(self.spans, dtype=np.int64).reshape(-1, len(SPAN_COLUMNS))
        # Sorted by lane and start (unique within a lane: zero-length spans are not kept) as
        # each column is gathered: a replay's spans are a GB or more, and a frame sorted after
        # it was built would hold them three times over.
        order = np.lexsort((c[:, 2], c[:, 1], c[:, 0]))
        columns = {name: c[order, i] for i, name in enumerate(SPAN_COLUMNS)}
        del c, order
        spans = frame("spans", {**columns, "stack": np.zeros(len(columns["start"]), np.int64)})
        del columns
        f = self.flows
        migrated = [fp >= 0 and tp >= 0 and fp != tp for fp, tp in zip(f["from_p"], f["to_p"], strict=True)]
        flows = frame("flows", {**f, "stack": [0] * len(f["kind"]), "migrated": migrated})
        lanes = self._lanes(spans)
        times, values = (
            [start, *(t for t, _ in self.procs_changes)],
            [procs, *(n for _, n in self.procs_changes)],
        )
        k = len(times)
        instants = frame(
            "instants",
            {"kind": [int(InstantKind.GOMAXPROCS)] * k, "time": times, "g": [NONE] * k, "p": [NONE] * k,
             "m": [NONE] * k, "label": [0] * k, "category": [0] * k, "id": values, "stack": [0] * k},
        )  # fmt: skip
        counters = frame(
            "counters",
            {"name": [self.sid(n) for n in self.counters["name"]], "time": self.counters["time"],
             "value": self.counters["value"]},
        )  # fmt: skip
        return Timeline(start_ns=start, end_ns=end, strings=self.strings, spans=spans, flows=flows,
                        counters=counters, instants=instants, lanes=lanes, go_version="model")  # fmt: skip

    def _lanes(self, spans: pl.DataFrame) -> pl.DataFrame:
        keys = spans.select("lane_kind", "lane_id").unique().sort(["lane_kind", "lane_id"])
        labels, groups, system = [], [], []
        for lk, lid in keys.iter_rows():
            if lk == LaneKind.G:
                name, sysg = self.g_names.get(lid, ("", False))
                labels.append(f"G{lid} {name}".strip())
                groups.append(name)
                system.append(sysg)
            else:
                labels.append(
                    {LaneKind.P: f"Proc {lid}", LaneKind.M: f"Thread {lid}"}.get(lk, LaneKind(lk).name)
                )
                groups.append("")
                system.append(False)
        return frame("lanes", {"lane_kind": keys["lane_kind"], "lane_id": keys["lane_id"], "label": labels,
                               "group": groups, "system": system})  # fmt: skip


F_WAKEUP, F_CREATE, F_SYSCALL_EXIT, F_REQUEUE = (int(FlowKind.WAKEUP), int(FlowKind.CREATE),
                                                int(FlowKind.SYSCALL_EXIT), int(FlowKind.REQUEUE))  # fmt: skip
