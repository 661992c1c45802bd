"""Lab records added to a trace's Timeline, so every timeline view shows them.

- each P's local run-queue length becomes a counter named after the P's lane
  ("Proc 3: run queue"), which every view draws directly under that lane;
- each steal becomes a flow (FlowKind.STEAL) from the victim's P lane to the thief's;
- sysmon's wake-ups become marks on a lane of their own (sysmon's M, which the
  trace never shows: sysmon runs without a P and emits no events).

Records and trace share nanotime, so they land at the right place without any
alignment; records outside the trace's span are left out. The returned Timeline is a new one; the trace's own tables are kept.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl

from goblueprint.lab import runqueues
from goblueprint.render.lanes import lane_counter_name
from goblueprint.timeline.model import NONE, FlowKind, InstantKind, LaneKind, Timeline, frame


def with_records(tl: Timeline, records: pl.DataFrame) -> Timeline:
    # The runtime records from its start, the tracer only once started: what falls outside
    # the trace's span has no lanes to sit on (and Perfetto takes no time before its origin).
    records = records.filter(pl.col("t").is_between(tl.start_ns, tl.end_ns))
    strings = list(tl.strings)
    index = {text: i for i, text in enumerate(strings)}

    def intern(text: str) -> int:
        if text not in index:
            index[text] = len(strings)
            strings.append(text)
        return index[text]

    lengths = runqueues.queue_lengths(records)
    names = {
        p: intern(lane_counter_name(LaneKind.P, p, "run queue")) for p in sorted(set(lengths["p"].to_list()))
    }
    counters = frame(
        "counters",
        {
            "name": lengths["p"].replace_strict(names, return_dtype=pl.UInt32),
            "time": lengths["t"],
            "value": lengths["length"].cast(pl.Float64),
        },
    )
    steals = runqueues.steals(records)
    n = len(steals)
    label = intern("steal")
    t = np.array([s["t"] for s in steals], dtype=np.int64)
    flows = frame(
        "flows",
        {
            "kind": np.full(n, int(FlowKind.STEAL), dtype=np.uint8),
            "g": np.full(n, NONE, dtype=np.int64),
            "from_g": np.full(n, NONE, dtype=np.int64),
            "from_p": np.array([s["victim"] for s in steals], dtype=np.int64),
            "from_time": t,
            "to_p": np.array([s["thief"] for s in steals], dtype=np.int64),
            "to_m": np.full(n, NONE, dtype=np.int64),
            "to_time": t,
            "label": np.full(n, label, dtype=np.uint32),
            "stack": np.zeros(n, dtype=np.uint32),
            "migrated": np.ones(n, dtype=bool),
        },
    )
    wakes = records.filter(pl.col("kind") == "sysmon_wake")
    wake_label = intern("sysmon wake")
    instants = frame(
        "instants",
        {
            "kind": np.full(wakes.height, int(InstantKind.OTHER), dtype=np.uint8),
            "time": wakes["t"],
            "g": np.full(wakes.height, NONE, dtype=np.int64),
            "p": np.full(wakes.height, NONE, dtype=np.int64),
            "m": wakes["m"].cast(pl.Int64),
            "label": np.full(wakes.height, wake_label, dtype=np.uint32),
            "category": np.zeros(wakes.height, dtype=np.uint32),
            "id": wakes["a"].cast(pl.Int64),  # the delay sysmon asked for (µs)
            "stack": np.zeros(wakes.height, dtype=np.uint32),
        },
    )
    sysmon_ms = sorted(set(wakes["m"].cast(pl.Int64).to_list()))
    lanes = frame(
        "lanes",
        {
            "lane_kind": [int(LaneKind.M)] * len(sysmon_ms),
            "lane_id": sysmon_ms,
            "label": [f"sysmon (thread {m})" for m in sysmon_ms],
            "group": [""] * len(sysmon_ms),
            "system": [False] * len(sysmon_ms),
        },
    )
    return dataclasses.replace(
        tl,
        strings=strings,
        counters=pl.concat([tl.counters, counters]),
        flows=pl.concat([tl.flows, flows]),
        instants=pl.concat([tl.instants, instants]),
        lanes=pl.concat(
            [
                tl.lanes.filter(
                    ~pl.col("lane_id").is_in(sysmon_ms) | (pl.col("lane_kind") != int(LaneKind.M))
                ),
                lanes,
            ]
        ),
    )
