"""Synthetic Timelines for renderer tests: known content, any size, hostile strings on demand."""

from __future__ import annotations

import numpy as np
import polars as pl

from goblueprint.timeline.model import FlowKind, InstantKind, LaneKind, State, Timeline, frame

HOSTILE = [
    "</script><script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "<svg onload=window.__pwned=3>",
    "&lt;b&gt; & \u2028 ]]> -->",
]


def synthetic(
    goroutines: int = 6,
    spans_per_g: int = 40,
    procs: int = 3,
    hostile: bool = False,
    seed: int = 1,
    functions: tuple[str, ...] = (),
    run_stack: int = 2,
) -> Timeline:
    """A Timeline with G/P/M/GC/STW lanes, regions, counters, flows, instants and stacks.

    G spans tile each goroutine's life (running/runnable/waiting); each running span is
    mirrored on a P lane and an M lane, as the real builder does.  FUNCTIONS, if given,
    are the goroutines' start functions in turn (else all start in main.worker).
    RUN_STACK is the stack of running G spans: 0 is what the builder writes (Go records
    no stack when a goroutine starts running).
    """
    rng = np.random.default_rng(seed)
    start_ns = 1_000_000_000
    strings = ["", "main.worker", "main.go", "chan receive", "sleep", "runtime.gopark", "proc.go",
               "stop-the-world (GC sweep termination)", "GC", "myregion", "cat", "hello log"]  # fmt: skip
    if hostile:
        strings[1] = "main.(*T)." + HOSTILE[0]
        strings[3] = HOSTILE[1]
        strings[9] = HOSTILE[2]
        strings[11] = HOSTILE[3]
    # stack 1: worker <- gopark; stack 2: worker
    frames = frame(
        "stack_frames",
        {"stack": [1, 1, 2], "depth": [0, 1, 0], "pc": [0x1000, 0x2000, 0x2000],
         "func": [5, 1, 1], "file": [6, 2, 2], "line": [400, 17, 17]},
    )  # fmt: skip
    cols: dict[str, list] = {
        k: [] for k in ("lane_kind", "lane_id", "start", "end", "state", "g", "p", "m", "label", "stack")
    }

    def add(kind, lane_id, s, e, state, g=-1, p=-1, m=-1, label=0, stack=0):
        for key, val in zip(cols, (kind, lane_id, s, e, state, g, p, m, label, stack), strict=True):
            cols[key].append(val)

    flows: dict[str, list] = {
        k: []
        for k in (
            "kind",
            "g",
            "from_g",
            "from_p",
            "from_time",
            "to_p",
            "to_m",
            "to_time",
            "label",
            "stack",
            "migrated",
        )
    }
    end = start_ns
    p_free = [start_ns] * procs
    lanes = {"lane_kind": [], "lane_id": [], "label": [], "group": [], "system": []}
    for gid in range(1, goroutines + 1):
        t = start_ns + int(rng.integers(0, 5000))
        lanes["lane_kind"].append(int(LaneKind.G))
        lanes["lane_id"].append(gid)
        fn = functions[(gid - 1) % len(functions)] if functions else strings[1]
        lanes["label"].append(f"G{gid} {fn}")
        lanes["group"].append(fn)
        lanes["system"].append(gid == goroutines)  # one system goroutine
        for k in range(spans_per_g):
            d = int(rng.integers(200, 20000))
            state = (State.G_RUNNING, State.G_RUNNABLE, State.G_WAITING)[k % 3]
            if state == State.G_RUNNING:
                p = int(np.argmin(p_free))
                t = max(t, p_free[p])
                add(LaneKind.G, gid, t, t + d, state, g=gid, p=p, m=p, stack=run_stack)
                add(LaneKind.P, p, t, t + d, State.P_RUNNING, g=gid, p=p, m=p)
                add(LaneKind.M, p, t, t + d, State.M_RUNNING, g=gid, p=p, m=p)
                p_free[p] = t + d
            elif state == State.G_WAITING:
                add(LaneKind.G, gid, t, t + d, state, g=gid, label=3, stack=1)
                waker = gid % goroutines + 1
                for key, val in zip(
                    flows, (FlowKind.WAKEUP, gid, waker, 0, t + d, 0, 0, t + d + 50, 3, 1, False), strict=True
                ):
                    flows[key].append(val)
            else:
                add(LaneKind.G, gid, t, t + 50 if k + 1 < spans_per_g else t + d, state, g=gid)
                d = 50 if k + 1 < spans_per_g else d
            t += d
        end = max(end, t)
        add(LaneKind.REGION, gid, start_ns + 100, start_ns + 900, State.REGION, g=gid, p=-1, m=0, label=9)
    end = max(end, *p_free)
    add(LaneKind.GC, 0, start_ns + 2000, start_ns + 9000, State.GC_CYCLE, label=8)
    add(LaneKind.STW, 0, start_ns + 2000, start_ns + 2300, State.STW, label=7)
    for p in range(procs):
        lanes["lane_kind"].append(int(LaneKind.P))
        lanes["lane_id"].append(p)
        lanes["label"].append(f"Proc {p}")
        lanes["group"].append("")
        lanes["system"].append(False)
    spans = frame("spans", cols)
    # Fill P/M gaps with idle so they tile too (the builder does).
    counters = frame(
        "counters",
        {"name": [strings.index("GC")] * 0 + [len(strings), len(strings), len(strings) + 1, len(strings) + 1],
         "time": [start_ns, start_ns + 5000, start_ns, end - 10], "value": [1 << 20, 3 << 20, 3.0, 5.0]},
    )  # fmt: skip
    strings += ["/memory/classes/heap/objects:bytes", "/sched/goroutines:goroutines"]
    instants = frame(
        "instants",
        {"kind": [InstantKind.LOG, InstantKind.TASK_BEGIN], "time": [start_ns + 300, start_ns + 100],
         "g": [1, 1], "p": [-1, -1], "m": [-1, -1], "label": [11, 9], "category": [10, 0], "id": [1, 1],
         "stack": [2, 0]},
    )  # fmt: skip
    return Timeline(
        start_ns=start_ns, end_ns=end, strings=strings, spans=spans, flows=frame("flows", flows),
        counters=counters, instants=instants, lanes=frame("lanes", lanes), stack_frames=frames, go_version="1.27",
    )  # fmt: skip


def million(n_spans: int = 1_000_000, goroutines: int = 2000, procs: int = 8, seed: int = 7) -> Timeline:
    """A big Timeline built with numpy: tiled G lanes plus P lanes, about ``n_spans`` spans."""
    rng = np.random.default_rng(seed)
    per_g = max(1, n_spans // (goroutines * 2))
    start_ns = 0
    d = rng.integers(100, 5000, size=(goroutines, per_g))
    ends = np.cumsum(d, axis=1)
    starts = ends - d
    gid = np.repeat(np.arange(1, goroutines + 1), per_g)
    state = np.tile(np.array([State.G_RUNNING, State.G_RUNNABLE, State.G_WAITING], dtype=np.uint8), per_g)[
        :per_g
    ]
    n = goroutines * per_g
    g_spans = pl.DataFrame(
        {
            "lane_kind": np.full(n, LaneKind.G, dtype=np.uint8), "lane_id": gid, "start": starts.ravel(),
            "end": ends.ravel(), "state": np.tile(state, goroutines), "g": gid, "p": np.full(n, -1),
            "m": np.full(n, -1), "label": np.zeros(n, dtype=np.uint32), "stack": np.zeros(n, dtype=np.uint32),
        }
    )  # fmt: skip
    total = int(ends.max())
    pn = n // procs
    pd = np.full((procs, pn), max(1, total // pn))
    p_ends = np.cumsum(pd, axis=1)
    p_id = np.repeat(np.arange(procs), pn)
    p_spans = pl.DataFrame(
        {
            "lane_kind": np.full(procs * pn, LaneKind.P, dtype=np.uint8), "lane_id": p_id,
            "start": (p_ends - pd).ravel(), "end": p_ends.ravel(),
            "state": np.full(procs * pn, State.P_RUNNING, dtype=np.uint8),
            "g": rng.integers(1, goroutines + 1, size=procs * pn), "p": p_id, "m": p_id,
            "label": np.zeros(procs * pn, dtype=np.uint32), "stack": np.zeros(procs * pn, dtype=np.uint32),
        }
    )  # fmt: skip
    spans = frame("spans", {c: pl.concat([g_spans, p_spans])[c] for c in g_spans.columns})
    return Timeline(start_ns=start_ns, end_ns=total, spans=spans, go_version="1.27")


def drawable_flows(tl) -> int:
    """Wake-ups a view can draw: the woken G has a lane and so has its waker (its G, else its P)."""
    g_ids = tl.spans.filter(pl.col("lane_kind") == int(LaneKind.G))["lane_id"].unique()
    p_ids = tl.spans.filter(pl.col("lane_kind") == int(LaneKind.P))["lane_id"].unique()
    known = pl.col("from_g").is_in(g_ids.implode()) | pl.col("from_p").is_in(p_ids.implode())
    return tl.flows.filter((pl.col("to_time") >= 0) & known & pl.col("g").is_in(g_ids.implode())).height


def window_arrows(flows: pl.DataFrame, lanes, origin: int, t_from: int, t_to: int) -> list[tuple[int, ...]]:
    """The arrows of the window [T_FROM, T_TO) (times from ORIGIN) between LANES (in page order),
    worked out row by row: (from, to, from_lane, to_lane), in FLOWS' order. A flow starts on its
    waker's G lane, else on its P lane; it ends on its G's lane, else on the P it went to."""
    index = {(int(lane.kind), lane.lane_id): k for k, lane in enumerate(lanes)}
    want = []
    for f in flows.filter(pl.col("to_time") >= 0).iter_rows(named=True):
        if f["from_time"] - origin >= t_to or f["to_time"] - origin < t_from:
            continue
        src = index.get((int(LaneKind.G), f["from_g"]), index.get((int(LaneKind.P), f["from_p"]), -1))
        dst = (
            index.get((int(LaneKind.G), f["g"]), -1)
            if f["g"] >= 0
            else index.get((int(LaneKind.P), f["to_p"]), -1)
        )
        if src >= 0 and dst >= 0:
            want.append((f["from_time"] - origin, f["to_time"] - origin, src, dst))
    return want
