"""A real trace's work as a Program: each goroutine's running, blocking and spawning.

From the trace's Timeline (goblueprint.timeline): a G's running spans become CPU
of the same length (the model decides again where it is preempted); a wait that
another G ended becomes BLOCK in the waiter and WAKE at the same point of the
waker's CPU; a wait nobody's G ended becomes a timer (SLEEP) or a network wait
(NET) of the real length; a syscall keeps its real length; a go statement becomes
SPAWN at its point of the parent's CPU.  Gs that existed before the trace, or were
started by no G, are roots at their first time.  Stop-the-world spans replay as
they happened, and a GOMAXPROCS change replays at the end of the stop it happened in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.errors import TraceError
from goblueprint.model import program as P
from goblueprint.model import schedpass, spinning, wakecost, wakeups
from goblueprint.model.program import Op, Program
from goblueprint.timeline.model import FlowKind, InstantKind, LaneKind, State, Timeline

if TYPE_CHECKING:
    from goblueprint.model.osstalls import OsStalls

_RUN, _WAIT, _SYS = int(State.G_RUNNING), int(State.G_WAITING), int(State.G_SYSCALL)


def gomaxprocs(tl: Timeline) -> tuple[int, list[tuple[int, int]]]:
    """The GOMAXPROCS the trace starts with, and each later change as (time, new value).

    The trace states the value at every generation's start too; only a different value
    is a change (runtime.GOMAXPROCS(n) stopping the world for procresize).
    """
    ev = tl.instants.filter(pl.col("kind") == int(InstantKind.GOMAXPROCS)).sort("time")
    if ev.height == 0:
        return max(1, tl.spans.filter(pl.col("lane_kind") == int(LaneKind.P))["lane_id"].n_unique()), []
    values = [int(v) for v in ev["id"].to_list()]
    changes = []
    for t, v in zip(ev["time"].to_list()[1:], values[1:], strict=True):
        if v != (changes[-1][1] if changes else values[0]):
            changes.append((int(t), v))
    return values[0], changes


def _stw_with_resizes(
    tl: Timeline, changes: list[tuple[int, int]]
) -> tuple[list[tuple[int, int, str]], list[int], dict[int, int]]:
    """The trace's stop-the-world spans, each GOMAXPROCS change on the one it happened in.

    procresize runs while the world is stopped (startTheWorldWithSema), so a change
    belongs to the span that holds its time; one that no span holds (a trace that
    lost the span at a generation edge) gets a zero-length stop of its own. Also returns
    the G that stopped the world in each (-1 if none).
    """
    t0 = tl.start_ns
    stw = tl.spans.filter(pl.col("lane_kind") == int(LaneKind.STW)).sort("start")
    spans = [(int(s) - t0, int(e) - int(s), tl.strings[int(lb)], int(g))
             for s, e, lb, g in zip(stw["start"].to_list(), stw["end"].to_list(), stw["label"].to_list(),
                                    stw["g"].to_list(), strict=True)]  # fmt: skip
    placed: list[tuple[int, int]] = []  # (time, value) of changes no span holds
    at: dict[int, int] = {}  # span start -> value
    for t, v in changes:
        rel = t - t0
        host = [s for s, d, _, _ in spans if s <= rel <= s + d]
        if host:
            at[host[-1]] = v
        else:
            placed.append((rel, v))
    for rel, v in placed:
        spans.append((rel, 0, "stop-the-world (GOMAXPROCS)", -1))
        at[rel] = v
    spans.sort(key=lambda s: s[0])
    resize = {i: at[s] for i, (s, _, _, _) in enumerate(spans) if s in at}
    return [(s, d, r) for s, d, r, _ in spans], [g for _, _, _, g in spans], resize


def _cpu_appender(out: list[Op]) -> Callable[[int], None]:
    def cpu(ns: int) -> None:
        if ns <= 0:
            return
        if out and out[-1][0] == P.CPU:
            out[-1] = (P.CPU, out[-1][1] + ns, 0)  # preemptions are the model's to decide again
        else:
            out.append((P.CPU, ns, 0))

    return cpu


def _run_splitter(
    cpu: Callable[[int], None], out: list[Op], stalls: list[tuple[int, int]]
) -> Callable[[int, int], None]:
    """Emit a G's running from A to B (trace ns, called in time order) as CPU, and STALL where its
    thread was off its CPU meanwhile (STALLS, sorted and disjoint: model.osstalls)."""
    at = 0

    def stall(ns: int) -> None:
        if ns <= 0:
            return
        if out and out[-1][0] == P.STALL:
            out[-1] = (P.STALL, out[-1][1] + ns, 0)
        else:
            out.append((P.STALL, ns, 0))

    def run(a: int, b: int) -> None:
        nonlocal at
        while at < len(stalls) and stalls[at][1] <= a:
            at += 1
        cursor = a
        while at < len(stalls) and stalls[at][0] < b:
            s, e = max(stalls[at][0], cursor), min(stalls[at][1], b)
            cpu(s - cursor)
            stall(e - s)
            cursor = max(cursor, e)
            if stalls[at][1] > b:
                break
            at += 1
        cpu(b - cursor)

    return run


def _stacks_from(tl: Timeline, func: str) -> set[int]:
    """The ids of the stacks whose innermost frame is in FUNC."""
    if func not in tl.strings:
        return set()
    f = tl.stack_frames
    top = f.filter((pl.col("depth") == 0) & (pl.col("func") == tl.strings.index(func)))
    return set(top["stack"].to_list())


def from_timeline(tl: Timeline, os_stalls: OsStalls | None = None) -> Program:
    """The replay of TL; with OS_STALLS (a kernel recording of the same run, model.osstalls), the
    G's running is cut where its thread was off its CPU, and a P's M that waited for a CPU with
    no G delays its next schedule() as long."""
    prog = Program()
    under_g = os_stalls.under_g if os_stalls is not None else {}
    # The trace's schedule() passes that found their G at hand, and its own stalls: a P whose M
    # held it with its next G at hand far longer than a pass takes (model.schedpass); the
    # stalls a kernel recording measured take their place when there is one.
    pass_samples, own_stalls = schedpass.passes(tl)
    after_g = os_stalls.after_g if os_stalls is not None else own_stalls
    t0 = tl.start_ns
    gspans = tl.spans.filter(pl.col("lane_kind") == int(LaneKind.G)).sort(["lane_id", "start"])
    if not gspans.height:
        # Go's reader accepts a trace of generations without events (Sync only): no work to
        # replay, as go tool trace -pprof finds no goroutine in it.
        raise TraceError("failed to find any goroutine in the trace: nothing to replay")
    gids = unique(gspans["lane_id"].to_numpy())
    names = dict(zip(tl.lanes.filter(pl.col("lane_kind") == int(LaneKind.G))["lane_id"].to_list(),
                     tl.lanes.filter(pl.col("lane_kind") == int(LaneKind.G))["group"].to_list(), strict=True))  # fmt: skip
    system = dict(zip(tl.lanes.filter(pl.col("lane_kind") == int(LaneKind.G))["lane_id"].to_list(),
                      tl.lanes.filter(pl.col("lane_kind") == int(LaneKind.G))["system"].to_list(), strict=True))  # fmt: skip
    tmpl = {int(g): i for i, g in enumerate(gids)}
    known = set(tmpl)

    # What each G did to others (wake, create), by time; and who ended each wait.
    flows = tl.flows.filter(pl.col("kind").is_in([int(FlowKind.WAKEUP), int(FlowKind.CREATE)])).sort(
        "from_time"
    )
    acts: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    waker: dict[tuple[int, int], int] = {}  # (g, unblock time) -> waking G
    created_by: dict[int, tuple[int, int]] = {}
    for kind, g, fg, ft in zip(flows["kind"].to_list(), flows["g"].to_list(), flows["from_g"].to_list(),
                               flows["from_time"].to_list(), strict=True):  # fmt: skip
        if g not in known:
            continue
        by_g = fg >= 0 and fg in known and fg != g
        if kind == int(FlowKind.CREATE):
            if by_g:
                acts[fg].append((ft, P.SPAWN, tmpl[g]))
                created_by[g] = (fg, ft)
        elif by_g:
            acts[fg].append((ft, P.WAKE, tmpl[g]))
            waker[(g, ft)] = fg

    # A stop-the-world happens where the G that stopped the world was in its work (the model's
    # clock drifts from the trace's, and a stop at the trace's time would fall elsewhere).
    prog.procs, changes = gomaxprocs(tl)
    prog.find_idle_ns = spinning.median_ns(tl)  # the traced machine's spin before a P idles
    woke, none = wakecost.gaps_ns(tl)  # and what a thread wake-up cost the scheduler that made it
    prog.waker_ns = wakecost.median_cost_ns(woke, none)
    prog.waker_samples_ns = tuple(wakecost.costs_ns(woke, none).tolist())
    prog.schedule_samples_ns = tuple(pass_samples.tolist())  # and a schedule() pass
    prog.stw, stoppers, prog.resize = _stw_with_resizes(tl, changes)
    for i, g in enumerate(stoppers):
        if g in known:
            acts[g].append((t0 + prog.stw[i][0], P.STW, i))

    # runtime.Gosched and other voluntary stops (not "preempted": the model preempts on its own).
    rq = tl.flows.filter(pl.col("kind") == int(FlowKind.REQUEUE))
    pre = tl.strings.index("preempted") if "preempted" in tl.strings else -1
    # (g, time) -> 1 for runtime.goschedIfBusy's (bgsweep's): it yields only while no P is idle,
    # so the model yields there only if its own Ps are all busy then; 0 for runtime.Gosched.
    if_busy = _stacks_from(tl, "runtime.goschedIfBusy")
    yields = {(g, t): int(st in if_busy) for g, t, lb, st in zip(rq["g"].to_list(), rq["from_time"].to_list(),
              rq["label"].to_list(), rq["stack"].to_list(), strict=True) if lb != pre}  # fmt: skip
    lane = gspans["lane_id"].to_numpy()
    start = gspans["start"].to_numpy()
    end = gspans["end"].to_numpy()
    state = gspans["state"].to_numpy()
    label = gspans["label"].to_numpy()
    bounds = np.flatnonzero(np.diff(lane)) + 1
    firsts = np.concatenate([[0], bounds])
    lasts = np.concatenate([bounds, [len(lane)]])
    label_ids: dict[int, int] = {}
    ready_at, net_batches = _netpoll_readiness(tl)
    # (g, time, flow kind) of a readying -> (template, the op it ended; -1: the G's creation)
    readied_at: dict[tuple[int, int, int], tuple[int, int]] = {
        (g, t, int(FlowKind.CREATE)): (tmpl[g], -1) for g, (_, t) in created_by.items()
    }

    def stalled_after(g: int, run_end: int, out: list[Op]) -> None:
        # G's M waited for a CPU holding its P after this run ended: keyed at the op G is now past.
        ns = after_g.get((g, run_end))
        if ns:
            prog.stall_after[(tmpl[g], len(out))] = ns

    def lab(sid: int) -> int:
        got = label_ids.get(sid)
        if got is None:
            got = label_ids[sid] = prog.label(tl.strings[sid] or "waiting")
        return got

    for lo, hi in zip(firsts.tolist(), lasts.tolist(), strict=True):
        g = int(lane[lo])
        my = sorted(acts.get(g, ()))
        ai = 0
        out: list[Op] = []
        cpu = _cpu_appender(out)
        run = _run_splitter(cpu, out, under_g.get(g, []))

        for i in range(lo, hi):
            s, e, st = int(start[i]), int(end[i]), int(state[i])
            if st == _RUN:
                cursor = s
                while ai < len(my) and my[ai][0] <= e:
                    t, code, target = my[ai]
                    run(cursor, min(max(t, cursor), e))
                    cursor = min(max(t, cursor), e)
                    out.append((code, target, 1 if code == P.SPAWN else 0))
                    ai += 1
                run(cursor, e)
                if (g, e) in yields:
                    out.append((P.YIELD, yields[(g, e)], 0))
                    readied_at[(g, e, int(FlowKind.REQUEUE))] = (tmpl[g], len(out) - 1)
                    stalled_after(g, e, out)
            elif st == _WAIT:
                if (g, e) in waker:
                    out.append((P.BLOCK, lab(int(label[i])), 0))
                elif tl.strings[int(label[i])] == "network":
                    out.append((P.NET, ready_at.get((g, e), e) - s, 0))
                elif i + 1 < hi:  # a wait still going at the trace's end is not work
                    out.append((P.SLEEP, e - s, lab(int(label[i]))))
                else:
                    continue
                readied_at[(g, e, int(FlowKind.WAKEUP))] = (tmpl[g], len(out) - 1)
                stalled_after(g, s, out)
            elif st == _SYS:
                out.append((P.SYSCALL, e - s, 0))
        while ai < len(my):  # acts timed after the G's last span (clock edges): keep their order
            out.append((my[ai][1], my[ai][2], 1 if my[ai][1] == P.SPAWN else 0))
            ai += 1
        if int(state[hi - 1]) == _RUN:
            stalled_after(g, int(end[hi - 1]), out)  # goexit, past the last op
        prog.add_template(names.get(g, "") or f"G{g}", out, bool(system.get(g, False)))
        if g not in created_by:
            prog.roots.append((max(0, int(start[lo]) - t0), tmpl[g]))
    prog.roots.sort()
    prog.wake_ns, prog.wake_samples_ns = _wake_delays(tl, readied_at)
    # The sleeps one timers.check ended and the network waits one netpoll found, as groups of
    # the ops they ended (two or more of the op's kind).
    grouped = (
        (_timer_batches(tl), P.SLEEP, prog.timer_groups, prog.timer_group_members),
        (net_batches, P.NET, prog.net_groups, prog.net_group_members),
    )
    for batches, code, groups, group_members in grouped:
        for batch in batches:
            ops = [readied_at.get((g, t, int(FlowKind.WAKEUP))) for g, t in batch]
            members = [op for op in ops if op is not None and prog.templates[op[0]][op[1]][0] == code]
            if len(members) > 1:
                for op in members:
                    groups[op] = len(group_members)
                group_members.append(members)
    return prog


def _netpoll_readiness(tl: Timeline) -> tuple[dict[tuple[int, int], int], list[list[tuple[int, int]]]]:
    """When each network wait's fd became ready, in the order it did: (g, unblock time) -> time;
    and the batches one netpoll found (g, unblock time of each, two or more, in the trace's order).

    A trace shows when a netpoll unblocked the G, in the order of netpoll's list, which is
    not the order the fds became ready: netpollready pushes each G at the list's head, and
    findRunnable runs the head (list.pop(), traced last) and injectglist traces the rest in
    list order. So the Gs one findRunnable pass unblocked on a P (by no G, up to the G the P
    runs next) became ready in the reverse of their trace order, the one it ran last. The
    replay's waits end in that order, at the batch's own times, so the model's netpoll (which
    lists them as netpoll does) hands them out as the runtime did. A batch's fds were all ready
    by that one poll, so the replay keeps them together (Program.net_groups); unblocks after a
    P's last G run in the trace (its runs cut by the trace's end) are no batch.
    """
    f = _unblocks_by_pass(tl, "unblock (network)")
    out: dict[tuple[int, int], int] = {}
    batches = []
    for _, batch in f.group_by(["from_p", "run"], maintain_order=True):
        unblocks = list(zip(batch["g"].to_list(), batch["from_time"].to_list(), strict=True))
        if len(unblocks) > 1 and batch["run"][0] is not None:
            batches.append(unblocks)
        # The last one is the list's head if the P ran it next; the rest are injectglist's.
        n = len(unblocks) - 1 if unblocks[-1][0] == batch["next_g"][0] else len(unblocks)
        readiness = [*unblocks[:n][::-1], *unblocks[n:]]
        for (g, unblocked), (_, t) in zip(readiness, unblocks, strict=True):
            out[(g, unblocked)] = t
    return out, batches


def _unblocks_by_pass(tl: Timeline, label_text: str) -> pl.DataFrame:
    """The unblocks by no G on a P labelled LABEL_TEXT (g, from_p, from_time), in time order,
    each with the start of that P's next G run (run: null after its last) and that G (next_g):
    one findRunnable pass made those up to the run."""
    label = tl.strings.index(label_text) if label_text in tl.strings else -1
    f = tl.flows.filter(
        (pl.col("kind") == int(FlowKind.WAKEUP)) & (pl.col("from_g") < 0) & (pl.col("from_p") >= 0)
        & (pl.col("label") == label)
    ).select("g", "from_p", "from_time").sort("from_time")  # fmt: skip
    runs = (
        tl.spans.filter(
            (pl.col("lane_kind") == int(LaneKind.P))
            & (pl.col("state") == int(State.P_RUNNING))
            & (pl.col("g") >= 0)
        )
        .select(pl.col("lane_id").alias("from_p"), pl.col("start").alias("run"), pl.col("g").alias("next_g"))
        .sort("run")
    )
    return f.join_asof(runs, left_on="from_time", right_on="run", by="from_p", strategy="forward",
                       check_sortedness=False)  # fmt: skip


def _timer_batches(tl: Timeline) -> list[list[tuple[int, int]]]:
    """The sleeps one timers.check ended: (g, unblock time) of each, in the trace's order.

    timers.check (findRunnable's top, or stealWork's last round) runs every timer of a P's heap
    whose `when` has come, readying their Gs one after the other before the M runs any G; and
    the M that runs them after an idle stretch wakes from netpoll's epoll_wait, whose timeout is
    whole milliseconds (netpoll_epoll.go), so timers a millisecond apart expire at one check. In
    the trace: the sleeps' unblocks by no G on one P before that P's next G runs.
    """
    f = _unblocks_by_pass(tl, "unblock (sleep)").filter(pl.col("run").is_not_null())
    out = []  # (unblocks after a P's last G run, its runs cut by the trace's end, are no batch)
    for _, batch in f.group_by(["from_p", "run"], maintain_order=True):
        if batch.height > 1:
            out.append(list(zip(batch["g"].to_list(), batch["from_time"].to_list(), strict=True)))
    return out


def _wake_delays(
    tl: Timeline, readied_at: dict[tuple[int, int, int], tuple[int, int]]
) -> tuple[dict[tuple[int, int], int], tuple[int, ...]]:
    """The trace's thread wake-ups (model.wakeups) for work a G readied, each keyed by the op of
    the readying that began it; and their delays, in the order they began.

    The machine's, not the runtime's: how long the OS took to run a thread the runtime woke.
    Keyed by the program's point, not the clock, as a replayed wait's length is: the model's
    clock drifts from the trace's, and the same wake-up then falls where it fell (a readying
    the model makes with no idle P wakes nobody, and its delay goes unused).
    """
    w = wakeups.wakes(tl)
    out: dict[tuple[int, int], int] = {}
    for g, t, kind, end in zip(w["g"].to_list(), w["ready"].to_list(), w["kind"].to_list(), w["end"].to_list(),
                               strict=True):  # fmt: skip
        at = readied_at.get((g, t, kind))
        if at is not None:
            out[at] = end - t
    return out, tuple(out.values())
