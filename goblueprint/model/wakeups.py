"""The thread wake-up delays a trace shows: from when the runtime woke an M to its ProcStart.

Go 1.27 wakes a parked thread when it readies work while a P is idle and no M spins:
``ready``, ``newproc`` and ``goschedImpl`` (Gosched, preemption) end in ``wakep``, which
takes the top P of the idle stack (the P that went idle last, ``pidlegetSpinning``) and
hands it to a thread (``startm``, ``notewakeup``). Neither call is traced: the P stays
idle in the trace until the woken thread runs ``acquirep``, which emits ProcStart. Both
ends are in the trace, though: the readying (a G unblocked, created or requeued: its
flow's ``from_time``) and that ProcStart. So for each idle span of a P that a thread
ends by starting it, the wake-up runs from the first readying in the span at which this
P was the one wakep takes (idle, and no other P went idle after it) to the span's end —
one at a time, as the woken thread counts as spinning until it runs and wakep wakes
nobody meanwhile.

Left out, so that what is measured errs short, never long:

* a G findRunnable readies and runs itself, with no wakep: netpoll's first G
  (``list.pop()``; the rest of its batch goes through injectglist, which starts Ms) and a
  GC mark worker — an unblock by no G of a network or "system goroutine wait", on a P
  whose next G is that one;
* a span a thread back from a syscall ends (``exitsyscall``'s ProcStart with the G's
  syscall end: nobody woke it), one nothing was readied in (an M parked in netpoll woke for
  a timer or the network: when it should have woken is not in the trace, and a replayed
  wait's length already holds that lateness), one that runs to the trace's end, and a P
  beyond the GOMAXPROCS of its time.

A wake-up a stop-the-world cuts ends at the stop (``stopped``: the thread had not run by
then, so it took at least that long). What the trace cannot say errs short: a thread
woken for a timer may have taken the P before the readying (the P looks idle all along),
and injectglist's several threads at once count as one.
"""

from __future__ import annotations

import heapq
import weakref

import numpy as np
import polars as pl

from goblueprint.timeline.model import FlowKind, InstantKind, LaneKind, State, Timeline

_READYING = (int(FlowKind.WAKEUP), int(FlowKind.CREATE), int(FlowKind.REQUEUE))
# Unblocks findRunnable makes of a G it then runs itself: netpoll's first G, a GC mark worker.
_FIND_RUNNABLE_OWN = ("unblock (network)", "unblock (system goroutine wait)")
_NOT_WOKEN, _STARTED, _STOPPED = 0, 1, 2  # how an idle span ended


def delays_ns(tl: Timeline) -> np.ndarray:
    """The trace's measured thread wake-up delays (ns, int64, in the order the wake-ups began)."""
    w = wakes(tl)
    return (w["end"] - w["ready"]).to_numpy().astype(np.int64)


def wakes(tl: Timeline) -> pl.DataFrame:
    """One row per measured wake-up: its P, the readying that began it (``ready``, its ``g``
    and flow ``kind``), its end, and how it ended.

    ``end`` is the P's ProcStart, or the start of a stop-the-world that came first
    (``stopped``: the thread had not run by then, so the delay is at least that long).
    The last timeline's are kept (weakly): a replay and its comparison ask for them four times.
    """
    global _last
    if _last is not None and _last[0]() is tl:
        return _last[1]
    w = _wakes(tl)
    _last = (weakref.ref(tl), w)
    return w


_last: tuple[weakref.ref[Timeline], pl.DataFrame] | None = None


def _wakes(tl: Timeline) -> pl.DataFrame:
    lane, start, end, kind = _idle_spans(tl)
    readyings = _readyings(tl)
    ready = readyings["from_time"].to_numpy().astype(np.int64)
    ready_g, ready_kind = readyings["g"].to_numpy(), readyings["kind"].to_numpy()
    stw_start = np.sort(tl.spans.filter(pl.col("lane_kind") == int(LaneKind.STW))["start"].to_numpy())
    spans = np.flatnonzero(kind != _NOT_WOKEN).tolist()
    # Ps that went idle during a span are on top of the idle stack while they stay idle: a
    # readying then wakes one of them, not the span's P.
    on_top: dict[int, list[tuple[int, int]]] = {}
    for i in spans:
        lo, hi = np.searchsorted(start, [start[i] + 1, end[i]], "left").tolist()
        on_top[i] = [(int(start[j]), int(end[j])) for j in range(lo, hi) if lane[j] != lane[i]]

    def first(i: int, since: int) -> int:
        """Index of the first readying at or after SINCE in span I at which its P is on top (-1: none)."""
        lo, hi = np.searchsorted(ready, [max(int(start[i]), since), int(end[i])], "left").tolist()
        for k in range(lo, hi):
            t = int(ready[k])
            if not any(s2 <= t < e2 for s2, e2 in on_top[i]):
                return k
        return -1

    # One wake-up pending at a time (the woken thread counts as spinning until it runs, and
    # wakep wakes nobody while one spins): the readyings of a pending one start no other.
    heap = [(int(ready[k]), i, k) for i in spans if (k := first(i, -(1 << 62))) >= 0]
    heapq.heapify(heap)
    pending_until = -(1 << 62)
    rows: list[tuple[int, int, int, bool, int, int]] = []
    while heap:
        t, i, k = heapq.heappop(heap)
        if t < pending_until:
            if (k := first(i, pending_until)) >= 0:
                heapq.heappush(heap, (int(ready[k]), i, k))
            continue
        n = int(np.searchsorted(stw_start, t, "left"))
        stop = int(stw_start[n]) if n < stw_start.size else int(end[i]) + 1
        pending_until = min(int(end[i]), stop)
        rows.append((int(lane[i]), t, pending_until, bool(kind[i] == _STOPPED) or stop <= end[i],
                     int(ready_g[k]), int(ready_kind[k])))  # fmt: skip
    return pl.DataFrame(rows, schema={"p": pl.Int64, "ready": pl.Int64, "end": pl.Int64, "stopped": pl.Boolean,
                                      "g": pl.Int64, "kind": pl.UInt8}, orient="row")  # fmt: skip


def _readyings(tl: Timeline) -> pl.DataFrame:
    """When a G was made runnable in a way that ends in wakep: from_time, g, kind (sorted by time).

    Left out: a G that findRunnable readies and returns to run itself on its P, no wakep
    — the first G of a netpoll (``list.pop()``; the rest of the batch goes through
    injectglist, which starts Ms) and a GC mark worker (``findRunnableGCWorker``). In the
    trace: an unblock by no G, on a P whose next G is that one, of a network wait or a
    "system goroutine wait" (the reason gcBgMarkWorker parks with). A timer's G (``ready``,
    then wakep) is readied by no G too, and runs next on its P too, but waited on
    something else.
    """
    f = tl.flows.filter(pl.col("kind").is_in(_READYING)).select(
        "g", "kind", "from_g", "from_p", "from_time", "label"
    )
    own_reasons = [i for i, text in enumerate(tl.strings) if text in _FIND_RUNNABLE_OWN]
    runs = (
        tl.spans.filter(
            (pl.col("lane_kind") == int(LaneKind.P))
            & (pl.col("state") == int(State.P_RUNNING))
            & (pl.col("g") >= 0)
        )
        .select(pl.col("lane_id").alias("from_p"), pl.col("start"), pl.col("g").alias("next_g"))
        .sort("start")
    )
    # Both sides are sorted by time; polars cannot check that within by-groups.
    f = f.sort("from_time").join_asof(
        runs, left_on="from_time", right_on="start", by="from_p", strategy="forward", check_sortedness=False
    )
    own = (pl.col("from_g") < 0) & (pl.col("next_g") == pl.col("g")) & pl.col("label").is_in(own_reasons)
    return (
        f.filter(~own.fill_null(False))
        .select("from_time", "g", "kind")
        .sort("from_time", maintain_order=True)
    )


def _idle_spans(tl: Timeline) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every idle span of a P (lane, start, end; sorted by start) and how it ended.

    _STARTED: a thread started the P: its next span begins where this one ends (running, or
    idle again for a thread that took it and found nothing at that instant) and no G's
    syscall ends there on this P (exitsyscall's ProcStart). _STOPPED: a stop-the-world
    stopped it. Else, or if the P was beyond GOMAXPROCS when the span began, _NOT_WOKEN.
    """
    p = tl.spans.filter(pl.col("lane_kind") == int(LaneKind.P)).sort(["lane_id", "start"])
    p = p.with_columns(
        next_state=pl.col("state").shift(-1).over("lane_id"),
        next_start=pl.col("start").shift(-1).over("lane_id"),
    ).filter(pl.col("state") == int(State.P_IDLE))
    g = tl.spans.filter(pl.col("lane_kind") == int(LaneKind.G)).sort(["lane_id", "start"])
    g = g.with_columns(before=pl.col("state").shift(1).over("lane_id"))
    back = g.filter((pl.col("state") == int(State.G_RUNNING)) & (pl.col("before") == int(State.G_SYSCALL)))
    back = back.select(
        pl.col("start").alias("end"), pl.col("p").alias("lane_id"), syscall=pl.lit(True)
    ).unique()
    p = p.join(back, on=["end", "lane_id"], how="left").sort("start")
    contiguous = (p["next_start"] == p["end"]).fill_null(False)
    started = (
        contiguous & p["next_state"].is_in([int(State.P_RUNNING), int(State.P_IDLE)]) & p["syscall"].is_null()
    )
    stopped = contiguous & (p["next_state"] == int(State.P_STOPPED))
    kind = np.where(started.fill_null(False).to_numpy(), _STARTED, _NOT_WOKEN)
    kind[stopped.fill_null(False).to_numpy()] = _STOPPED
    kind[p["lane_id"].to_numpy() >= gomaxprocs_at(tl, p["start"].to_numpy())] = _NOT_WOKEN
    return p["lane_id"].to_numpy(), p["start"].to_numpy(), p["end"].to_numpy(), kind


def gomaxprocs_at(tl: Timeline, times: np.ndarray) -> np.ndarray:
    """GOMAXPROCS in force at each of TIMES (no change recorded: unbounded)."""
    ev = tl.instants.filter(pl.col("kind") == int(InstantKind.GOMAXPROCS)).sort("time")
    if ev.height == 0:
        return np.full(times.shape, 1 << 30)
    at = np.searchsorted(ev["time"].to_numpy(), times, "right") - 1
    return ev["id"].to_numpy()[np.maximum(at, 0)]
