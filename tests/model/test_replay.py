"""Replay of real traces of the project's Go programs: work conserved, metrics within tolerance.

The tolerances are the ones README.md states (measured on these traces). Migrations, thread
wake-ups and idle P spans are held only to the factor reached (docs/model.md, issue 14);
p99 latency on the sched traces to ±10 % (2026-12-08: the fds one netpoll found together).
"""

from __future__ import annotations

import dataclasses
import lzma
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from goblueprint.model import api, engine, measure, policies, replay, wakeups
from goblueprint.model import program as P
from goblueprint.model.constants import Constants, Costs, from_source
from goblueprint.timeline.analysis import analyse
from goblueprint.timeline.model import FlowKind, LaneKind, State

pytestmark = pytest.mark.slow


GOLDEN = Path(__file__).resolve().parent.parent / "timeline" / "golden_builder"


@pytest.fixture(scope="module")
def sched_trace(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    # A committed trace of the sched program, not a fresh run: the tolerances are measured on
    # it, and a fresh run's tail latencies differ run to run (the simulation itself is seeded).
    trace = tmp_path_factory.mktemp("replay") / "sched-go1.27.trace"
    trace.write_bytes(lzma.decompress((GOLDEN / "sched-go1.27.trace.xz").read_bytes()))
    tl = analyse(str(trace)).timeline
    return tl, replay.from_timeline(tl)


def _running_per_g(tl: object) -> dict[int, int]:
    s = tl.spans.filter((pl.col("lane_kind") == int(LaneKind.G)) & (pl.col("state") == int(State.G_RUNNING)))  # type: ignore[attr-defined]
    agg = s.group_by("lane_id").agg((pl.col("end") - pl.col("start")).sum().alias("d"))
    return dict(agg.iter_rows())


def test_replay_keeps_each_goroutines_work_and_the_model_runs_all_of_it(
    sched_trace: tuple, consts: Constants
) -> None:
    tl, prog = sched_trace
    real = _running_per_g(tl)
    gids = sorted(real) + sorted(
        set(tl.spans.filter(pl.col("lane_kind") == 0)["lane_id"].to_list()) - set(real)
    )
    by_tmpl = {}
    order = sorted(set(tl.spans.filter(pl.col("lane_kind") == 0)["lane_id"].to_list()))
    for i, g in enumerate(order):
        by_tmpl[g] = sum(a for code, a, _ in prog.templates[i] if code == P.CPU)
    assert by_tmpl == {g: real.get(g, 0) for g in order}
    assert len(gids) == len(prog.templates)
    # Every wake the trace attributes to a goroutine is one WAKE in the waker and one BLOCK in the wakee.
    wakes = sum(code == P.WAKE for ops in prog.templates for code, _, _ in ops)
    blocks = sum(code == P.BLOCK for ops in prog.templates for code, _, _ in ops)
    assert wakes >= blocks > 1000
    # bgsweep's yields are runtime.goschedIfBusy's (the model yields there only with no P idle),
    # main's are runtime.Gosched's.
    kinds = {
        (prog.names[t], a) for t, ops in enumerate(prog.templates) for code, a, _ in ops if code == P.YIELD
    }
    assert kinds == {("runtime.bgsweep", 1), ("main.main", 0)}
    # Every stop-the-world is one STW op in the G that stopped the world (its point of that
    # G's work), and the program's runtime.GOMAXPROCS(1) ... (2) are resizes at the end of theirs.
    stw = tl.spans.filter(pl.col("lane_kind") == int(LaneKind.STW)).sort("start")
    stoppers = {i: order.index(g) for i, g in enumerate(stw["g"].to_list())}
    assert {a: t for t, ops in enumerate(prog.templates) for code, a, _ in ops if code == P.STW} == stoppers
    assert sorted((prog.stw[i][2], n) for i, n in prog.resize.items()) == [
        ("stop-the-world (GOMAXPROCS)", 1),
        ("stop-the-world (GOMAXPROCS)", 2),
    ]
    # The invariants hold all along a real run's stops, GOMAXPROCS changes, timers and netpolls.
    sim = engine.Sim(prog, consts, policies.resolve([]), prog.procs, 3, decisions=False)
    sim.run(check_every=500)
    sim.check_invariants()
    simulated = sum(_running_per_g(sim.rec.timeline(engine.T_START, sim.end, prog.procs)).values())
    assert simulated == sum(by_tmpl.values())


def test_replay_wakes_threads_as_late_as_the_trace_did_at_the_same_readyings(
    sched_trace: tuple, consts: Constants
) -> None:
    # The trace's thread wake-ups (model.wakeups), keyed by the op of the readying that began
    # each: a G's creation (-1), the wait a WAKEUP ended, the YIELD a REQUEUE is.
    tl, prog = sched_trace
    real = wakeups.wakes(tl)
    assert len(prog.wake_ns) >= 0.9 * real.height
    kinds = {-1: FlowKind.CREATE, P.BLOCK: FlowKind.WAKEUP, P.SLEEP: FlowKind.WAKEUP, P.NET: FlowKind.WAKEUP,
             P.YIELD: FlowKind.REQUEUE}  # fmt: skip
    assert all((prog.templates[t][op][0] if op >= 0 else -1) in kinds for t, op in prog.wake_ns)
    # The model then wakes those threads as late at the same points of the program: what
    # model.wakeups reads from its timeline is the trace's own delay at a readying of the same
    # goroutine (or shorter, where the model's run hides part of it), never the constant's.
    # (Without the draws from the trace's delays for the wake-ups it has no counterpart of,
    # tested apart in test_wakeups, so that a long one here is the keyed one.)
    sim = engine.Sim(dataclasses.replace(prog, wake_samples_ns=()), consts, policies.resolve([]), prog.procs, 1,
                     decisions=False)  # fmt: skip
    sim.run()
    stl = sim.rec.timeline(engine.T_START, sim.end, prog.procs)

    def by_name(t: object, w: pl.DataFrame) -> list[tuple[str, int]]:
        lanes = t.lanes.filter(pl.col("lane_kind") == int(LaneKind.G)).select(
            pl.col("lane_id").alias("g"), "group"
        )  # type: ignore[attr-defined]
        w = w.join(lanes, on="g", how="left").with_columns(d=pl.col("end") - pl.col("ready"))
        return list(zip(w["group"].to_list(), w["d"].to_list(), strict=True))

    trace_side = by_name(tl, real)
    long_ = [(n, d) for n, d in by_name(stl, wakeups.wakes(stl)) if d > 10 * Costs().wake_m_ns]
    # The trace's longest, where it was: 7.59 ms, ended by a stop-the-world, which the model's
    # run may reach a little sooner (7.43 ms since the fds one netpoll found stay together and
    # the network phase before it runs on one P as traced).
    name, longest = max(trace_side, key=lambda x: x[1])
    assert any(n == name and 0.95 * longest <= d <= longest for n, d in long_)
    assert all(any(n == m and d <= e for m, e in trace_side) for n, d in long_)


def test_replay_s_network_waits_end_in_the_order_netpoll_lists_them(
    sched_trace: tuple, consts: Constants
) -> None:
    # The trace orders one findRunnable netpoll's unblocks as its list: injectglist's in list
    # order, then the head, which the P runs next. netpollready pushes each G at the list's
    # head, so the replay ends the waits in the reverse order (the head last), and the
    # model's netpoll, listing them from the last ready, gives the trace's order back.
    tl, prog = sched_trace
    waits = {}  # (g, unblock time) -> the replay's wait end
    for g, ops in zip(sorted(set(tl.spans.filter(pl.col("lane_kind") == 0)["lane_id"].to_list())), prog.templates,
                      strict=True):  # fmt: skip
        s = tl.spans.filter(
            (pl.col("lane_kind") == 0) & (pl.col("lane_id") == g) & (pl.col("state") == 2)
        ).sort("start")
        nets = [a for code, a, _ in ops if code == P.NET]
        net_spans = s.filter(pl.col("label") == tl.strings.index("network"))
        for (start, end), d in zip(net_spans.select("start", "end").iter_rows(), nets, strict=False):
            waits[(g, end)] = start + d
    f = tl.flows.filter((pl.col("label") == tl.strings.index("unblock (network)")) & (pl.col("from_p") >= 0))
    p_runs = tl.spans.filter((pl.col("lane_kind") == 1) & (pl.col("state") == 10) & (pl.col("g") >= 0))
    batches = 0
    for p in (0, 1):
        starts = np.sort(p_runs.filter(pl.col("lane_id") == p)["start"].to_numpy())
        fp = f.filter(pl.col("from_p") == p).sort("from_time")
        nxt = np.searchsorted(starts, fp["from_time"].to_numpy(), "left")
        for k in np.unique(nxt):
            rows = fp.filter(pl.Series(nxt == k))
            traced = list(zip(rows["g"].to_list(), rows["from_time"].to_list(), strict=True))
            if len(traced) < 2:
                continue
            batches += 1
            sim = engine.Sim(prog, consts, policies.resolve([]), prog.procs, 1, decisions=False)
            sim.netready = [g for g, _ in sorted(traced, key=lambda gt: waits[gt])]
            listed = sim.netpoll_list([])
            ran_next = int(p_runs.filter(pl.col("start") == starts[k])["g"][0]) if k < len(starts) else -1
            order = [g for g, _ in traced]
            want = [order[-1], *order[:-1]] if order[-1] == ran_next else order
            assert listed == want
    assert batches > 100


def test_the_fds_one_netpoll_found_are_replayed_as_a_group(sched_trace: tuple) -> None:
    # In the network phase one P ran the echo pairs and its findRunnable's netpoll(0) found
    # the fds of four round trips ready at a time (injectglist queued three, the P ran the
    # head). The replay groups each poll's waits (their NET ops) to become ready together
    # (test_rules: test_fds_one_netpoll_found_in_the_trace_become_ready_together).
    tl, prog = sched_trace
    batches = replay._netpoll_readiness(tl)[1]
    assert len(prog.net_group_members) == len(batches) > 90
    assert sum(len(m) == 4 for m in prog.net_group_members) > 90
    for members in prog.net_group_members:
        assert len(members) > 1 and all(prog.templates[t][op][0] == P.NET for t, op in members)
        assert all(prog.net_groups[m] == prog.net_groups[members[0]] for m in members)


@pytest.mark.parametrize("name", ["sched-go1.27", "sched-go1.22"])
@pytest.mark.parametrize("seed", [1, 2])
def test_replay_metrics_within_the_stated_tolerance(
    name: str, seed: int, consts: Constants, tmp_path: Path
) -> None:
    # README's tolerance table, measured on these committed traces; (on other programs)
    # preemptions are not within any tolerance yet and are not held; migrations only to the
    # factor reached (x0.97-x5.0: where the traced machine ran one of the two Ps' threads at a
    # time, the model's second P steals and takes injectglist's Gs; 1.27's seed 1 keeps its
    # channels phase on one P since the trace's own stalls are replayed, model.schedpass).
    trace = tmp_path / f"{name}.trace"
    trace.write_bytes(lzma.decompress((GOLDEN / f"{name}.trace.xz").read_bytes()))
    tl = analyse(str(trace)).timeline
    prog = replay.from_timeline(tl)
    real = measure.from_timeline(tl, prog.procs)
    sim = measure.of_sim(api.simulate(prog, consts, policies.resolve([]), seed=seed, decisions=False))
    assert sim["goroutines"] == real["goroutines"]
    # (±0.04 and ±5 % before runqgrab's sleep took its time: 1.22's Ps idled too little.)
    assert abs(sim["p_utilization"] - real["p_utilization"]) <= 0.02
    assert abs(sim["sched_latency_p50_ns"] - real["sched_latency_p50_ns"]) <= 300
    # The tail is the network phase's: the fds one netpoll found ready together in the trace
    # become ready together in the replay, and injectglist queues all but one behind the G the
    # P runs (0.92-0.99x the real on seeds 1 and 2; 0.63-0.67x before the net groups).
    assert (
        0.9 * real["sched_latency_p99_ns"]
        <= sim["sched_latency_p99_ns"]
        <= 1.1 * real["sched_latency_p99_ns"]
    )
    assert 0.5 <= sim["preemptions"] / max(1, real["preemptions"]) <= 2
    # (±2 % before the trace's own wake-ups: 1.22's P0 now starts 2 ms late, as traced, and its
    # CPU-bound phase ends on one P longer; ±2.5 % before the wake-ups the trace has no
    # counterpart of were drawn from its measured ones, whose longest, 7.6 ms on 1.27, a
    # seed may draw where work waits. ±3 % before the trace's own stalls, 4.2 ms of them on 1.27,
    # were replayed where the trace has them: 1.27's seed 1 ends 3.2 % late, 2.7 % before.)
    assert abs(sim["wall_ns"] - real["wall_ns"]) <= 0.035 * real["wall_ns"]
    assert 0.9 * real["migrations"] <= sim["migrations"] <= 5.5 * real["migrations"]
    # findRunnable spins as long as the traced machine did (model.spinning), holding its P and
    # nmspinning through its steal rounds, so wakep wakes fewer threads and Ps idle less often:
    # and an M giving its P up polls the network (findRunnable's blocking netpoll), so Gs ready
    # there run on the P it takes back instead of waiting for another P's poll and its wakep:
    # still too many of both (x1.5-x1.6 and x1.8-x2.0, from x1.5-x1.7 and x1.9-x2.0 before).
    # One M polls the network at a time, so timers expiring within its wake-up run on its one
    # P and a netpoll finds several Gs, whose injectglist starts Ms for idle Ps: more wake-ups
    # (x1.6-x1.8), as the source has it where the real runs had no P idle (docs/model.md).
    assert abs(sim["find_idle_p50_ns"] - real["find_idle_p50_ns"]) <= 0.1 * real["find_idle_p50_ns"]
    # What waking a thread cost the scheduler that did it, before it ran the G it readied
    # (model.wakecost: 8-11 µs here, a futex wake and the CPU it gives up): the replay charges
    # the traced machine's and reads it back the same way from its own timeline.
    assert real["waker_cost_ns"] > 1_000
    assert abs(sim["waker_cost_ns"] - real["waker_cost_ns"]) <= 0.1 * real["waker_cost_ns"]
    assert real["thread_wakeups"] < sim["thread_wakeups"] <= 1.9 * real["thread_wakeups"]
    # (x1.19-x1.33 before the net groups: the network phase's P drained and idled between
    # polls that found one fd each; now 0.97-1.22x.)
    assert 0.9 * real["idle_p_spans"] <= sim["idle_p_spans"] <= 1.5 * real["idle_p_spans"]
    # Thread wake-ups read the same way from both: the trace's run from microseconds to
    # milliseconds; the model's take the trace's own where it woke a thread at the same point
    # of the program (elsewhere a draw from the trace's, or the constant where it measured too
    # few), and never read longer.
    assert real["thread_wakeups"] > 0 and sim["thread_wakeups"] > 0
    assert Costs().wake_m_ns < sim["thread_wake_max_ns"] <= real["thread_wake_max_ns"]
    # So Ps sit idle while Gs wait about as the traced machine let them: about half the real or
    # more (a sixth before the trace's wake-ups; over half before an M refused a spin held its
    # P for the trace's fruitless findRunnable; the rest is in wake-ups the model's run does not
    # make where the trace's did). Up to twice the real where a seed draws the trace's longest
    # wake-up (7.6 ms on 1.27) while work waits: seeds 1-10 give 0.51-2.03x the real on 1.27 and
    # 0.33-0.80x on 1.22 (0.57-1.28x and 0.50-1.34x before the drawn schedule() passes, which
    # move what each seed draws where; never above the real on seeds 1 and 2 then).
    assert (
        0.45 * real["idle_p_while_runnable_ns"]
        <= sim["idle_p_while_runnable_ns"]
        <= 2.1 * real["idle_p_while_runnable_ns"]
    )


def test_compare_command_json(
    sched_trace: tuple, go_trace: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from goblueprint.cli import main

    assert main(["simulate", "compare", "--trace", str(go_trace("sched", go="1.27")), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    for side in ("real", "sim"):
        assert set(measure.COMPARED) <= set(got[side])
        assert 0 <= got[side]["p_utilization"] <= 1
    # The release whose rules replayed it is stated (the model's default is the bundled one).
    assert got["go"]["model"] == from_source().go_version and got["go"]["trace_format"].startswith("1.")


def test_a_trace_that_breaks_part_way_is_not_replayed(
    go_trace: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from goblueprint.cli import main

    data = go_trace("sched", go="1.27").read_bytes()
    cut = tmp_path / "cut.trace"
    cut.write_bytes(data[: len(data) // 2])
    assert main(["simulate", "compare", "--trace", str(cut)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("goblueprint: error: ") and err.count("\n") == 1


def test_a_trace_without_goroutines_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Go's reader accepts a trace whose one generation holds its frequency and no event (it
    # yields two Syncs); the replay of its no goroutines ended in an IndexError.
    from goblueprint.cli import main
    from goblueprint.trace import spec
    from goblueprint.trace.wire import uvarint as uv

    freq = bytes([spec.EV_FREQUENCY]) + uv(15625000)
    batch = bytes([spec.EV_EVENT_BATCH]) + uv(1) + uv((1 << 64) - 1) + uv(0) + uv(len(freq)) + freq
    empty = tmp_path / "empty.trace"
    empty.write_bytes(spec.header(spec.GO122) + batch)
    for argv in (["compare", "--trace", str(empty)], [str(empty)]):
        assert main(["simulate", *argv]) == 1, argv
        out, err = capsys.readouterr()
        assert (
            out == ""
            and err == "goblueprint: error: failed to find any goroutine in the trace: nothing to replay\n"
        )


def test_the_timers_one_check_ran_are_replayed_as_a_group(tmp_path: Path) -> None:
    # gens's pingers sleep 2 ms each; the M that runs their timers after an idle stretch wakes
    # from epoll_wait on whole milliseconds, so one timers.check often ran two or three: their
    # unblocks by no G on one P before that P runs a G. The replay groups those sleeps (their
    # SLEEP ops), to expire together (test_rules: test_timers_one_check_ran_in_the_trace_expire_together).
    trace = tmp_path / "gens.trace"
    trace.write_bytes(lzma.decompress((GOLDEN / "gens-go1.27.trace.xz").read_bytes()))
    tl = analyse(str(trace)).timeline
    batches = replay._timer_batches(tl)
    sleep = tl.strings.index("unblock (sleep)")
    f = tl.flows.filter((pl.col("label") == sleep) & (pl.col("from_g") < 0))
    p_of = dict(
        zip(zip(f["g"].to_list(), f["from_time"].to_list(), strict=True), f["from_p"].to_list(), strict=True)
    )
    runs = tl.spans.filter(
        (pl.col("lane_kind") == int(LaneKind.P))
        & (pl.col("state") == int(State.P_RUNNING))
        & (pl.col("g") >= 0)
    )
    assert len(batches) > 500
    for batch in batches:
        assert len(batch) > 1 and [t for _, t in batch] == sorted(t for _, t in batch)
        (p,) = {p_of[gt] for gt in batch}  # one P
        first, last = batch[0][1], batch[-1][1]
        between = runs.filter(
            (pl.col("lane_id") == p) & (pl.col("start") > first) & (pl.col("start") <= last)
        )
        assert between.height == 0  # no G ran there meanwhile: one findRunnable
    prog = replay.from_timeline(tl)
    assert len(prog.timer_group_members) == len(batches)
    for members in prog.timer_group_members:
        assert all(prog.templates[t][op][0] == P.SLEEP for t, op in members)
        assert all(prog.timer_groups[m] == prog.timer_groups[members[0]] for m in members)


def test_a_mostly_idle_trace_gets_few_preemptions(consts: Constants, tmp_path: Path) -> None:
    # gens sleeps most of its 2.5 s and the runtime preempted nothing. A sysmon woken at its
    # 20 µs tick by every started P (not the runtime's: only syscalls and startTheWorld wake
    # it) preempted over a hundred times here. With the waker's costs drawn from the trace's
    # (2026-12-07) seeds 1-6 give 6, 4, 5, 9, 5, 11 (4, 4, 6, 9, 5, 11 since a stolen timer's G
    # inherits the time slice, 2026-12-08; 2, 4, 5, 5, 3, 1 since the timers one check ran in
    # the trace expire together). The Gs preempted had run 0.8-37 µs on a P whose
    # schedtick sysmon last saw before an idle stretch, as the source has it; 29 of the 39 come
    # as sysmon's notetsleep times out at a timer's traced unblock, where the real sysmon woke
    # at the timer's earlier `when` (netpoll's epoll_wait waits whole milliseconds), which the
    # trace does not record (docs/model.md, "sysmon's preemptions on a mostly idle trace").
    trace = tmp_path / "gens.trace"
    trace.write_bytes(lzma.decompress((GOLDEN / "gens-go1.27.trace.xz").read_bytes()))
    tl = analyse(str(trace)).timeline
    prog = replay.from_timeline(tl)
    assert measure.from_timeline(tl, prog.procs)["preemptions"] == 0
    sim = measure.of_sim(api.simulate(prog, consts, policies.resolve([]), seed=1, decisions=False))
    assert sim["preemptions"] <= 12
