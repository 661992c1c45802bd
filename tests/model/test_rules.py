"""Each scheduler rule against a small hand-built situation (numbers from the release's source)."""

from __future__ import annotations

import heapq
from dataclasses import replace

import polars as pl
import pytest

from goblueprint.model import engine, policies, spinning
from goblueprint.model import program as P
from goblueprint.model.constants import Constants, Costs
from goblueprint.model.engine import PS_RUN, PS_SYSCALL, Sim
from goblueprint.model.program import Program
from goblueprint.timeline.model import FlowKind


def _sim(consts: Constants, procs: int = 4, templates: int = 1) -> Sim:
    prog = Program()
    for i in range(templates):
        prog.add_template(f"main.t{i}", [(P.CPU, 1000, 0)])
    sim = Sim(prog, consts, policies.resolve([]), procs, seed=7)
    return sim


def _gs(sim: Sim, n: int) -> list[int]:
    out = []
    for _ in range(n):
        g = sim.new_g(0)
        out.append(g)
    return out


def _take_p(sim: Sim, p: int) -> None:
    sim.pidle.remove(p)
    sim.npidle -= 1
    sim.pstatus[p] = PS_RUN
    sim.pm[p] = sim.new_m()


def test_full_local_queue_overflows_half_plus_new_to_global(consts: Constants) -> None:
    sim = _sim(consts)
    size = consts.runq_size
    gs = _gs(sim, size + 1)
    for g in gs[:size]:
        sim.enqueue(0, g, False, "test")
    assert len(sim.runq[0]) == size and not sim.globq
    sim.enqueue(0, gs[size], False, "test")
    # runqputslow: the first half of the queue, in order, then the new G.
    assert list(sim.globq) == [*gs[: size // 2], gs[size]]
    assert list(sim.runq[0]) == gs[size // 2 : size]


def test_runnext_kicks_old_runnext_to_tail(consts: Constants) -> None:
    sim = _sim(consts)
    a, b = _gs(sim, 2)
    sim.enqueue(0, a, True, "test")
    sim.enqueue(0, b, True, "test")
    assert sim.runnext[0] == b and list(sim.runq[0]) == [a]
    g, inherit = sim.pol.next_local(sim, 0)
    assert (g, inherit) == (b, consts.runnext_inherits_time)


def test_every_61st_tick_takes_the_global_queue_first(consts: Constants) -> None:
    sim = _sim(consts)
    _take_p(sim, 0)
    local, glob = _gs(sim, 2)
    sim.enqueue(0, local, False, "test")
    sim.globq.append(glob)
    sim.schedtick[0] = consts.global_queue_tick - 1
    assert sim.find_runnable(0) == (local, False)  # tick 60: local first
    sim.runq[0].appendleft(local)
    sim.schedtick[0] = consts.global_queue_tick
    assert sim.find_runnable(0) == (glob, False)  # tick 61: the global queue first


def test_global_batch_size(consts: Constants) -> None:
    sim = _sim(consts, procs=4)
    _take_p(sim, 0)
    gs = _gs(sim, 10)
    sim.globq.extend(gs)
    sim.schedtick[0] = 1
    g, _ = sim.find_runnable(0)
    # min(128, 10, 10/4 + 1) = 3: one runs, two go to the local queue.
    assert g == gs[0] and list(sim.runq[0]) == gs[1:3] and list(sim.globq) == gs[3:]


def test_steal_of_an_odd_sized_queue_takes_the_larger_half(consts: Constants) -> None:
    sim = _sim(consts, procs=2)
    _take_p(sim, 0)
    _take_p(sim, 1)
    gs = _gs(sim, 7)
    sim.runq[1].extend(gs)
    g = sim.steal_work(0)
    # n - n/2 = 4 from the head: the last of them runs, three join the thief's queue.
    assert g == gs[3] and list(sim.runq[0]) == gs[:3] and list(sim.runq[1]) == gs[4:]


def test_runnext_is_stolen_only_in_the_last_round(consts: Constants) -> None:
    sim = _sim(consts, procs=2)
    _take_p(sim, 0)
    _take_p(sim, 1)
    g, running = _gs(sim, 2)
    sim.runnext[1] = g
    sim.pg[1], sim.gp[running], sim.gstatus[running] = running, 1, engine.GS_RUNNING
    rounds = []
    order = sim.pol.steal_order

    def counting(s: Sim, p: int) -> list[int]:
        rounds.append(s.runnext[1])
        return order(s, p)

    sim.pol = policies.Policy(names=("test",), steal_order=counting)
    # (steal_work runs the rounds at one instant: runqgrab's sleep ends with nothing moved.)
    assert sim.steal_work(0) == g
    assert len(rounds) == consts.steal_tries and all(r == g for r in rounds)


def _p0_to_runqgrab_sleep(sim: Sim) -> None:
    """Run P0's steal rounds until its M sleeps in runqgrab (or gets a G, or idles)."""
    while sim.grab[0] is None and sim.pg[0] < 0 and sim.pstatus[0] == PS_RUN:
        sim.now, _, kind, a, b = heapq.heappop(sim.heap)
        if kind == engine.EV_SCHED and a == 0 and sim.pepoch[0] == b:
            sim.schedule(0)


def _runnext_on_running_p1(consts: Constants) -> tuple[Sim, int]:
    """P0's M spins (rounds of 1 µs) with an idle P2; P1 runs a G and holds G in its runnext."""
    sim = _spinning_p0(consts, procs=3)
    g, running = _gs(sim, 2)
    sim.runnext[1] = g
    sim.pg[1], sim.gp[running], sim.gstatus[running] = running, 1, engine.GS_RUNNING
    return sim, g


def test_a_spinning_m_sleeps_in_runqgrab_before_taking_a_running_ps_runnext(consts: Constants) -> None:
    # runqgrab: "Sleep to ensure that pp isn't about to run the g we are about to steal" —
    # usleep(3), which Linux's timer slack stretches to ~53 µs. The M holds its P and its spin
    # through it (work readied meanwhile wakes nobody for the idle P2), then takes the runnext.
    sim, g = _runnext_on_running_p1(consts)
    t0 = sim.now
    _p0_to_runqgrab_sleep(sim)
    assert sim.now == t0 + consts.steal_tries * 1000 and sim.runnext[1] == g and sim.pg[0] < 0
    (h,) = _gs(sim, 1)
    sim.gstatus[h] = engine.GS_WAITING
    sim.ready(h, -1, 1, "test")  # h to P1's runnext, g kicked to its queue's tail
    sim.runnext[1], sim.runq[1] = g, type(sim.runq[1])()  # (P1 ran h at once)
    assert sim.pidle == [2] and sim.nmspinning == 1 and sim.pstatus[0] == PS_RUN
    _p0_rounds(sim)
    wait = consts.runnext_steal_wait_ns + Costs().timer_slack_ns
    # It was the last spinner, so resetspinning wakes a thread for the idle P2 before G runs.
    paid = Costs().waker_ns
    assert sim.pg[0] == g and sim.runnext[1] == -1 and sim.now == t0 + consts.steal_tries * 1000 + wait + paid


def test_runnext_is_left_to_a_p_that_schedules_it_during_runqgrabs_sleep(consts: Constants) -> None:
    # The point of the sleep: P1's G blocks meanwhile and P1 runs its runnext itself, so the
    # thief's CAS fails, it finds nothing else and gives its P up — no migration.
    sim, g = _runnext_on_running_p1(consts)
    t0 = sim.now
    _p0_to_runqgrab_sleep(sim)
    sim.runnext[1], sim.pg[1] = -1, g  # P1 schedules it
    sim.gstatus[g] = engine.GS_RUNNING
    _p0_rounds(sim)
    wait = consts.runnext_steal_wait_ns + Costs().timer_slack_ns
    assert sim.pstatus[0] == engine.PS_IDLE and sim.pg[1] == g
    assert sim.now == t0 + consts.steal_tries * 1000 + wait


def test_runqgrab_sleeps_again_for_a_new_runnext_after_its_cas_fails(consts: Constants) -> None:
    # runqgrab's loop: after the sleep the runnext is another G (P1 ran G, which readied H):
    # the CAS fails, it looks at P1 again and sleeps again before taking H.
    sim, g = _runnext_on_running_p1(consts)
    t0 = sim.now
    _p0_to_runqgrab_sleep(sim)
    (h,) = _gs(sim, 1)
    sim.runnext[1] = h
    sim.pg[1], sim.gstatus[g] = g, engine.GS_RUNNING
    sim.gstatus[h] = engine.GS_RUNNABLE
    _p0_rounds(sim)
    wait = consts.runnext_steal_wait_ns + Costs().timer_slack_ns
    paid = Costs().waker_ns  # the last spinner's resetspinning wakes a thread for the idle P2
    assert sim.pg[0] == h and sim.now == t0 + consts.steal_tries * 1000 + 2 * wait + paid


def test_steal_order_visits_every_p_once(consts: Constants) -> None:
    sim = _sim(consts, procs=6)
    for _ in range(50):
        order = policies.go_steal_order(sim, 0)
        assert sorted(order) == list(range(6))


def test_spinning_limit(consts: Constants) -> None:
    sim = _sim(consts, procs=4)
    sim.npidle = 0
    sim.nmspinning = 1
    assert sim.pol.may_spin(sim) == (consts.spinning_factor * 1 < 4)
    sim.nmspinning = 2
    assert sim.pol.may_spin(sim) == (consts.spinning_factor * 2 < 4)


def test_an_m_refused_a_spin_spins_anyway_when_a_wakep_found_no_idle_p(consts: Constants) -> None:
    # Both Ps run (a stop-the-world's end, say): work readied then finds no idle P, and wakep's
    # pidlegetSpinning sets sched.needspinning. P1 then goes idle and the next readying's wakep
    # starts a spinning M on it (its CAS does not clear needspinning). P0's G stops with nothing
    # local: 2×1 spinning ≥ 2−0 busy Ps refuses it a spin, but before releasep findRunnable sees
    # needspinning and spins after all (becomeSpinning, which clears it; goto top) — it does not
    # drop P0. Without needspinning it does.
    for need in (True, False):
        sim = _sim(consts, procs=2)
        _take_p(sim, 0)
        _take_p(sim, 1)
        assert not sim.wakep() and sim.needspinning
        sim.needspinning = need
        sim.pidleput(1)
        assert sim.wakep() and sim.nmspinning == 1 and sim.needspinning == need
        g, _ = sim.find_runnable(0)
        if need:
            assert g == engine.SPINNING and sim.spinning[0] and sim.nmspinning == 2 and not sim.needspinning
        else:
            assert g == -1 and not sim.spinning[0] and sim.nmspinning == 1


def test_syscall_retake_after_one_sysmon_observation_when_work_waits(consts: Constants) -> None:
    sim = _sim(consts, procs=2)
    _take_p(sim, 0)
    _take_p(sim, 1)
    g, waiting = _gs(sim, 2)
    sim.pg[0] = g
    sim.gp[g] = 0
    sim.gm[g] = sim.pm[0]
    sim.pstatus[0] = PS_SYSCALL
    sim.syscalltick[0] += 1
    sim.runq[0].append(waiting)  # work behind the syscall: no 10 ms grace
    assert sim.retake(sim.now) == 0  # first sight of this syscall: only noted
    assert sim.pstatus[0] == PS_SYSCALL
    assert sim.retake(sim.now + 20_000) == 1  # still the same syscall on the next tick: retaken
    assert sim.pstatus[0] == PS_RUN and sim.pg[0] == -1 and sim.pm[0] != sim.gm[g]


def test_syscall_kept_while_nothing_waits_and_others_idle(consts: Constants) -> None:
    sim = _sim(consts, procs=2)
    _take_p(sim, 0)
    (g,) = _gs(sim, 1)
    sim.pg[0], sim.gp[g], sim.gm[g] = g, 0, sim.pm[0]
    sim.pstatus[0] = PS_SYSCALL
    sim.syscalltick[0] += 1
    assert sim.retake(sim.now) == 0
    assert sim.retake(sim.now + consts.syscall_retake_ns - 1) == 0  # P1 is idle: the syscall keeps P0
    assert sim.retake(sim.now + consts.syscall_retake_ns) == 1


def test_sysmon_preempts_after_force_preempt_ns_of_one_schedtick(consts: Constants) -> None:
    prog = Program()
    prog.add_template("main.spin", [(P.CPU, 6 * consts.forcePreemptNS, 0)])
    prog.roots.append((0, 0))
    sim = Sim(prog, consts, policies.resolve([]), 1, seed=1)
    sim.run()
    # One G on one P: sysmon notes the new schedtick at a tick, preempts at the first tick
    # forcePreemptNS later; its sleep has backed off to the maximum by then.
    period = (consts.forcePreemptNS, consts.forcePreemptNS + 2 * consts.sysmon_max_sleep_us * 1000)
    assert 6 * consts.forcePreemptNS // period[1] <= sim.preemptions <= 6 * consts.forcePreemptNS // period[0]
    assert sim.preemptions >= 2
    tl = sim.rec.timeline(engine.T_START, sim.end, 1)
    runs = tl.spans.filter((tl.spans["lane_kind"] == 0) & (tl.spans["state"] == 0))
    longest = int((runs["end"] - runs["start"]).max())
    assert consts.forcePreemptNS <= longest <= consts.forcePreemptNS + 2 * consts.sysmon_max_sleep_us * 1000


def test_sysmon_backs_off_to_its_maximum(consts: Constants) -> None:
    sim = _sim(consts)
    delay = consts.sysmon_min_sleep_us
    seen = []
    for idle in range(1, consts.sysmon_idle_ticks + 40):
        delay = sim.pol.sysmon_tick(sim, delay, idle)
        seen.append(delay)
    assert seen[consts.sysmon_idle_ticks - 1] == consts.sysmon_min_sleep_us  # not before the idle ticks
    assert seen[consts.sysmon_idle_ticks] == 2 * consts.sysmon_min_sleep_us
    assert seen[-1] == consts.sysmon_max_sleep_us
    assert sim.pol.sysmon_tick(sim, consts.sysmon_max_sleep_us, 0) == consts.sysmon_min_sleep_us


def test_knob_changes_the_rule(consts: Constants) -> None:
    changed = consts.with_knobs({"global_queue_tick": "7", "steal_tries": "1"})
    assert changed.global_queue_tick == 7 and changed.steal_tries == 1
    assert changed.runq_size == consts.runq_size


def test_gomaxprocs_shrink_destroys_ps_and_puts_their_gs_at_the_global_head(consts: Constants) -> None:
    sim = _sim(consts, procs=3)
    sim.prog.stw = [(0, 1000, "stop-the-world (GOMAXPROCS)")]
    a, b, c, d = _gs(sim, 4)
    sim.runq[2].extend([a, b])
    sim.runnext[2] = c
    sim.globq.append(d)
    sim.stop_the_world(0, -1)
    sim.procresize(1)
    # p.destroy: the local queue from its tail, then runnext, each to the head of the global queue.
    assert list(sim.globq) == [c, a, b, d]
    assert sim.procs == 1 and sim.pidle == [0] and sim.npidle == 1
    assert sim.pstatus[1] == sim.pstatus[2] == engine.PS_DEAD
    assert policies.go_steal_order(sim, 0) == [0]  # stealOrder.reset(1)
    sim.check_invariants()


def test_the_g_that_stops_the_world_runs_through_it_and_the_stop_follows_the_program(
    consts: Constants,
) -> None:
    prog = Program()
    stop_ns = 50_000
    prog.add_template("main.main", [(P.CPU, 10_000, 0), (P.STW, 0, 0), (P.CPU, 100_000, 0)])
    prog.add_template("main.spin", [(P.CPU, 1_000_000, 0)])
    prog.roots += [(0, 0), (0, 1)]
    prog.stw = [(0, stop_ns, "stop-the-world (GOMAXPROCS)")]  # the trace's time (0) is not where it happens
    prog.resize = {0: 1}
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    stw = tl.spans.filter(tl.spans["lane_kind"] == int(engine.LSTW))
    runs = tl.spans.filter((tl.spans["lane_kind"] == 0) & (tl.spans["state"] == 0)).sort("start")
    main = runs.filter(runs["lane_id"] == 1)
    spin = runs.filter(runs["lane_id"] == 2)
    # main runs on one P without a break, the stop 10 µs into it; spin is stopped for it and,
    # with GOMAXPROCS 1 after it, runs only when main is done.
    assert main.height == 1 and stw.height == 1
    assert int(stw["start"][0]) == int(main["start"][0]) + 10_000
    assert int(stw["end"][0]) - int(stw["start"][0]) == stop_ns
    assert int(spin["start"][1]) >= int(main["end"][0])
    assert set(spin["p"].to_list()[1:]) == {int(main["p"][0])}


def test_a_stopper_that_left_its_p_during_the_stop_moves_nothing_to_p0(consts: Constants) -> None:
    # A replayed G that stopped the world for GOMAXPROCS may block before the world starts
    # again; its P, idle now, is destroyed like the others: P0 must not be taken for it
    # (it became a running P without an M, and its idle P went on holding a G and work no
    # one could steal, so spinning Ms looped until it ran).
    sim = _sim(consts, procs=2)
    sim.prog.stw = [(0, 1000, "stop-the-world (GOMAXPROCS)")]
    sim.prog.resize = {0: 1}
    g, w = _gs(sim, 2)
    _take_p(sim, 1)
    sim.execute(1, g, False)  # runs its 1 µs burst: the CPU event is pending
    sim.stop_the_world(0, 1)
    sim.park(g, 0)  # the stopper blocks during the stop: its P schedules, finds the world stopped
    sim.schedule(1)
    sim.ready(w, -1, 0, "unblock")  # a timer readies a G onto stopped P0 meanwhile
    sim.start_the_world(0)
    assert sim.procs == 1 and sim.pstatus[1] == engine.PS_DEAD
    assert sim.pg[0] == -1 and sim.pstatus[0] == PS_RUN and sim.pm[0] >= 0  # started for its queued G
    sim.check_invariants()


def test_a_blocked_syscall_that_resumes_on_another_p_is_no_migration(consts: Constants) -> None:
    # Migrations are counted the same way on both sides (from_p != to_p of a flow); the trace
    # gives a blocked syscall's exit no P, so the model must not give it the old one.
    sim = _sim(consts, procs=2)
    _take_p(sim, 0)
    g, other = _gs(sim, 2)
    sim.pg[0], sim.gp[g], sim.gm[g] = g, 0, sim.pm[0]
    sim.gstatus[g] = engine.GS_RUNNING
    sim.entersyscall(g, 1000)
    sim.handoffp(0)  # sysmon took P0 ...
    sim.pidle.remove(0)
    sim.npidle -= 1
    sim.pstatus[0], sim.pg[0] = PS_RUN, other  # ... and it runs another G now
    sim.exitsyscall(g)
    assert sim.gp[g] == 1  # exitsyscall's idle P
    tl = sim.rec.timeline(engine.T_START, sim.now + 1, 2)
    flow = tl.flows.filter(tl.flows["g"] == g)
    assert flow["to_p"].to_list() == [1] and flow["migrated"].to_list() == [False]


def _sleeping(sim: Sim, owner: int) -> int:
    (g,) = _gs(sim, 1)
    sim.gstatus[g], sim.gtimerp[g], sim.gp[g] = engine.GS_WAITING, owner, owner
    return g


def test_an_expired_timer_waits_for_its_busy_p_to_schedule(consts: Constants) -> None:
    sim = _sim(consts, procs=2)
    _take_p(sim, 0)
    _take_p(sim, 1)
    g = _sleeping(sim, 1)
    sim.timer_fired(g)  # no idle P, so no M parked in netpoll: P1 runs it in its findRunnable
    assert sim.gstatus[g] == engine.GS_WAITING and sim.runnext[1] == -1
    sim.now += 5000
    assert sim.find_runnable(1) == (g, consts.runnext_inherits_time)
    tl = sim.rec.timeline(engine.T_START, sim.now + 1, 2)
    assert tl.flows.filter(tl.flows["g"] == g)["from_time"].to_list() == [sim.now]  # unblocked when run


def _expired_on_p1(consts: Constants) -> tuple[Sim, int]:
    """Two running Ps and a G whose timer on P1's heap has expired, not yet run."""
    sim = _sim(consts, procs=2)
    _take_p(sim, 0)
    _take_p(sim, 1)
    g = _sleeping(sim, 1)
    sim.timer_fired(g)
    return sim, g


def test_a_spinning_m_steals_expired_timers_in_its_last_round(consts: Constants) -> None:
    sim, g = _expired_on_p1(consts)
    # P0 finds nothing local: stealWork runs P1's timer on P0 and runs its G.
    assert sim.steal_work(0) == g
    assert sim.gstatus[g] == engine.GS_RUNNABLE and not sim.ptimers[1] and sim.runnext[0] == -1
    tl = sim.rec.timeline(engine.T_START, sim.now + 1, 2)
    assert tl.flows.filter(tl.flows["g"] == g)["from_p"].to_list() == [0]  # readied on the thief


def test_a_timer_g_stolen_in_the_last_round_inherits_the_thiefs_time_slice(consts: Constants) -> None:
    # stealWork's last round runs P1's expired timer on the thief P0 (ready: P0's runnext) and
    # returns runqget's G with runqget's inheritTime (`return gp, inheritTime, ...`), which
    # findRunnable passes to execute: the G runs in P0's time slice, schedtick unchanged (so
    # sysmon's retake measures its run from P0's last schedtick, as it does any runnext G's).
    sim, g = _expired_on_p1(consts)
    sim.become_spinning(0)
    sim.spinround[0] = consts.steal_tries  # the last round
    assert sim.steal_round(0) == (g, consts.runnext_inherits_time)
    # A G taken by runqsteal starts a new slice.
    (h, k) = _gs(sim, 2)
    sim.enqueue(1, h, False, "test")
    sim.enqueue(1, k, False, "test")
    sim.spinround[0] = 1
    assert sim.steal_round(0) == (h, False)


def _grouped_waits(
    consts: Constants, code: int, waits: list[int], group: list[int] | None, cpu_first: int = 1000
) -> tuple[list[int], list[int], list[int]]:
    """Gs 0, 1, ... each run 1 µs (G 0 CPU_FIRST), wait WAITS[i] on op CODE (a SLEEP or a NET)
    and run 1 µs; GROUP lists the Gs whose waits the trace ended together (one timers.check,
    one netpoll), in the trace's order. Returns each G's unblock time, its own expiry or
    readiness, and when it ran after."""
    prog = Program()
    for i, ns in enumerate(waits):
        prog.add_template(
            f"main.w{i}", [(P.CPU, cpu_first if i == 0 else 1000, 0), (code, ns, 0), (P.CPU, 1000, 0)]
        )
        prog.roots.append((0, i))
    if group is not None:
        groups = {(i, 1): 0 for i in group}
        members = [[(i, 1) for i in group]]
        if code == P.SLEEP:
            prog.timer_groups, prog.timer_group_members = groups, members
        else:
            prog.net_groups, prog.net_group_members = groups, members
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1)
    sim.run(check_every=1)
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    label = "unblock (sleep)" if code == P.SLEEP else "unblock (network)"
    wake = tl.flows.filter(tl.flows["label"] == tl.strings.index(label)).sort("g")
    waited = tl.spans.filter(
        (tl.spans["lane_kind"] == 0) & (tl.spans["state"] == int(engine.State.G_WAITING))
    )
    due = [int(waited.filter(waited["lane_id"] == i + 1)["start"][0]) + ns for i, ns in enumerate(waits)]
    return wake["from_time"].to_list(), due, wake["to_time"].to_list()


def _sleepers(
    consts: Constants, sleeps: list[int], group: list[int] | None, cpu_first: int = 1000
) -> tuple[list[int], list[int], list[int]]:
    return _grouped_waits(consts, P.SLEEP, sleeps, group, cpu_first)


def test_timers_one_check_ran_in_the_trace_expire_together(consts: Constants) -> None:
    # timers.check runs every timer whose `when` has come, and the M that runs them after an
    # idle stretch wakes from netpoll's epoll_wait on whole milliseconds (netpoll_epoll.go), so
    # in the trace several sleeps end at one check; a replay keeps them together
    # (Program.timer_groups): B's timer expires with A's, 30 µs before its own, both run by the
    # one M woken for them.
    (a, b), (a_exp, b_exp), _ = _sleepers(consts, [100_000, 130_000], [0, 1])
    assert b_exp - a_exp == 30_000 and a == b and a - a_exp == sim_wake_ns()
    (a, b), (a_exp, b_exp), _ = _sleepers(consts, [100_000, 130_000], None)
    assert a - a_exp == b - b_exp == sim_wake_ns()  # each at its own expiry
    # A member not asleep on its grouped op when the group expires sleeps its own length.
    (a, b), (a_exp, b_exp), _ = _sleepers(consts, [100_000, 130_000], [0, 1], cpu_first=200_000)
    assert b < a_exp - 100_000 and a - a_exp == b - b_exp == sim_wake_ns()
    # timers.check readies them in `when` order, the model's own expiries whatever the trace's
    # order: A (100 µs), C (120), B (130); the last readied, B, is runnext and runs first.
    for order in ([0, 1, 2], [1, 2, 0], [2, 0, 1]):
        unblocked, _, ran = _sleepers(consts, [100_000, 130_000, 120_000], order)
        assert len(set(unblocked)) == 1
        assert ran[1] < ran[2] and ran[1] < ran[0], order


def _net_waiters(
    consts: Constants, waits: list[int], group: list[int] | None, cpu_first: int = 1000
) -> tuple[list[int], list[int]]:
    unblocked, ready, _ = _grouped_waits(consts, P.NET, waits, group, cpu_first)
    return unblocked, ready


def test_fds_one_netpoll_found_in_the_trace_become_ready_together(consts: Constants) -> None:
    # netpoll (netpoll_epoll.go) returns every fd ready by then in one list; findRunnable runs
    # its head and injectglist queues the rest, so in the trace several network waits end at one
    # poll. A replay keeps them together (Program.net_groups): B's fd is ready with A's, 30 µs
    # before its own, and the one M woken from netpoll unblocks both.
    (a, b), (a_ready, b_ready) = _net_waiters(consts, [100_000, 130_000], [0, 1])
    assert b_ready - a_ready == 30_000 and a == b and a - a_ready == sim_wake_ns()
    (a, b), (a_ready, b_ready) = _net_waiters(consts, [100_000, 130_000], None)
    assert a - a_ready == b - b_ready == sim_wake_ns()  # each at its own readiness
    # A member not waiting on its grouped op when the group's first fd is ready waits its own length.
    (a, b), (a_ready, b_ready) = _net_waiters(consts, [100_000, 130_000], [0, 1], cpu_first=200_000)
    assert b < a_ready - 100_000 and a - a_ready == b - b_ready == sim_wake_ns()


def sim_wake_ns() -> int:
    """The M parked in netpoll takes the constant wake-up to run a timer (a replayed wait holds
    the traced thread's lateness)."""
    return Costs().wake_m_ns


def test_with_an_idle_p_the_timer_runs_when_the_parked_m_wakes(consts: Constants) -> None:
    prog = Program()
    prog.add_template("main.sleeper", [(P.CPU, 1000, 0), (P.SLEEP, 100_000, 0), (P.CPU, 1000, 0)])
    prog.roots.append((0, 0))
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    wake = tl.flows.filter(tl.flows["label"] == tl.strings.index("unblock (sleep)"))
    slept = tl.spans.filter((tl.spans["lane_kind"] == 0) & (tl.spans["state"] == int(engine.State.G_WAITING)))
    expiry = int(slept["start"][0]) + 100_000
    # The trace records the unblock when the timer runs: after the M's wake-up, not at expiry,
    # and the G then runs from that P's runnext once the M has paid for waking a thread for the
    # other idle P (ready's wakep; see test_the_scheduler_pays_for_the_threads_it_wakes).
    assert wake["from_time"].to_list() == [expiry + sim.k.wake_m_ns]
    assert wake["to_time"][0] - wake["from_time"][0] == sim.k.waker_ns


def test_a_timer_expiring_while_its_p_s_m_spins_is_run_by_that_m(consts: Constants) -> None:
    # The sleeper's P0 spins through its steal rounds (1 µs each) when the 300 ns timer
    # expires: its M runs it itself (past the rounds its netpoll(0), pollUntil having come,
    # then findRunnable's top and timers.check), not a thread parked in netpoll, which would
    # wake for it whole milliseconds later (epoll_wait), with the idle P1.
    prog = Program()
    prog.add_template("main.sleeper", [(P.CPU, 1000, 0), (P.SLEEP, 300, 0), (P.CPU, 1000, 0)])
    prog.roots.append((0, 0))
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1, costs=Costs(steal_ns=1000))
    sim.run(check_every=1)
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    wake = tl.flows.filter(tl.flows["label"] == tl.strings.index("unblock (sleep)"))
    slept = tl.spans.filter((tl.spans["lane_kind"] == 0) & (tl.spans["state"] == int(engine.State.G_WAITING)))
    start = int(slept["start"][0])
    rounds = consts.steal_tries * 1000
    assert wake["from_p"].to_list() == [0] and wake["to_p"].to_list() == [0]
    # Unblocked after the rounds and one schedule() pass back from netpoll(0), not after a wake-up.
    assert wake["from_time"].to_list() == [start + sim.k.schedule_ns + rounds + sim.k.schedule_ns]
    # (P1's thread starts only for the wakep of the G's readying, from P0.)
    p1 = tl.spans.filter((tl.spans["lane_kind"] == 1) & (tl.spans["lane_id"] == 1))
    assert p1.filter(p1["state"] == int(engine.State.P_RUNNING))["start"].min() > wake["from_time"][0]


def _timer_g_latency(consts: Constants, procs: int, costs: Costs | None = None) -> tuple[int, Sim]:
    """From a sleeper's timer run by the woken poller to the G's start, with PROCS Ps."""
    prog = Program()
    prog.add_template("main.sleeper", [(P.CPU, 1000, 0), (P.SLEEP, 100_000, 0), (P.CPU, 1000, 0)])
    prog.roots.append((0, 0))
    sim = Sim(prog, consts, policies.resolve([]), procs, seed=1, costs=costs)
    sim.run(check_every=1)
    tl = sim.rec.timeline(engine.T_START, sim.end, procs)
    wake = tl.flows.filter(tl.flows["label"] == tl.strings.index("unblock (sleep)"))
    return int(wake["to_time"][0] - wake["from_time"][0]), sim


def test_the_scheduler_pays_for_the_threads_it_wakes(consts: Constants) -> None:
    # The poller M runs the timer (ready: runnext, then wakep). With another P idle, wakep's
    # startm wakes a thread for it, a futex wake on this M: the G runs that much later. With
    # one P nobody is woken and it runs at once.
    alone, _ = _timer_g_latency(consts, 1, Costs(waker_ns=7_000))
    assert alone <= Costs().schedule_ns
    paid, sim = _timer_g_latency(consts, 2, Costs(waker_ns=7_000))
    assert paid == 7_000 and sim.mcount == 2  # and the other P's M was woken
    assert "waker_cost" in sim.rec.dec["point"]


def test_a_g_that_readies_another_pays_nothing_extra(consts: Constants) -> None:
    # The futex wake a G's ready() makes is inside the G's own running time (a replay's CPU
    # holds it): only the scheduler's M, with no G, is charged.
    sim = _sim(consts, procs=2)
    _take_p(sim, 0)
    waker, target, timer_g = _gs(sim, 3)
    sim.pg[0], sim.gp[waker], sim.gstatus[waker] = waker, 0, engine.GS_RUNNING
    sim.gstatus[target] = engine.GS_WAITING
    sim.ready(target, waker, 0, "unblock (chan receive)")
    assert sim.nmspinning == 1 and sim.owed[0] == 0  # a thread was woken, the G pays nothing
    sim.pg[0] = -1  # now the M is in the scheduler (the G parked) and runs a timer
    sim.nmspinning, sim.spinning[1] = 0, False
    sim.pidleput(1)
    sim.gstatus[timer_g] = engine.GS_WAITING
    sim.ready(timer_g, -1, 0, "unblock (sleep)")
    assert sim.owed[0] == sim.waker_ns > 0


def _spinner_found_a_g(consts: Constants) -> tuple[Sim, int]:
    """A spinning M on P0 that finds a G in its queue and schedules it (resetspinning's wakep)."""
    sim = _sim(consts, procs=3)
    _take_p(sim, 0)
    (g,) = _gs(sim, 1)
    sim.spinning[0], sim.nmspinning = True, 1
    sim.enqueue(0, g, False, "test")
    sim.schedule(0)
    return sim, g


def test_resetspinning_s_wakep_delays_the_g_the_spinner_found(consts: Constants) -> None:
    # The last spinning M to find work wakes another (resetspinning) before execute.
    sim, g = _spinner_found_a_g(consts)
    assert sim.held[0] == g and sim.pg[0] == -1 and sim.nmspinning == 1  # the woken one spins
    sim.check_invariants()  # the held G is somewhere
    t0 = sim.now
    while sim.pg[0] != g:
        t, _, kind, a, b = heapq.heappop(sim.heap)
        sim.now = t
        if kind == engine.EV_SCHED and a == 0 and sim.pepoch[0] == b:
            sim.schedule(0)
    assert sim.now - t0 == sim.waker_ns


def test_a_stop_the_world_puts_a_held_g_back_on_runnext(consts: Constants) -> None:
    sim, g = _spinner_found_a_g(consts)
    assert sim.held[0] == g
    sim.prog.stw.append((0, 1000, "stop-the-world (test)"))
    sim.stop_the_world(len(sim.prog.stw) - 1, -1)
    assert sim.held[0] == -1 and sim.runnext[0] == g
    sim.check_invariants()


def test_timers_expiring_while_the_woken_poller_has_not_run_run_on_its_p(consts: Constants) -> None:
    # One M blocks in netpoll (sched.lastpoll). A timer expiring after it was woken and before
    # it runs wakes no other M: the poller runs it too (timers.check), on the one P it took;
    # the second G waits in that P's queue for the spinning M its ready() wakes for P1.
    sim = _sim(consts, procs=2)
    a, b = _sleeping(sim, 0), _sleeping(sim, 1)
    sim.timer_fired(a)
    sim.now += 1000
    sim.timer_fired(b)
    assert sim.pidle == [1] and sim.npidle == 1
    while True:
        t, _, kind, _, p = heapq.heappop(sim.heap)
        if kind == engine.EV_TIMER_RUN:
            break
    sim.now = t
    sim.poller_runs(p)
    assert p == 0 and sim.runnext[0] == b and list(sim.runq[0]) == [a]
    assert sim.pstatus[1] == PS_RUN and sim.nmspinning == 1  # wakep: a spinning M for P1
    tl = sim.rec.timeline(engine.T_START, sim.now + 1, 2)
    assert sorted(tl.flows["from_p"].to_list()) == [0, 0] and set(tl.flows["from_time"].to_list()) == {t}


def test_netpoll_s_one_ready_g_wakes_nobody(consts: Constants) -> None:
    # injectglist returns at once on an empty list: the one G a netpoll found runs on the
    # polling P, and no thread is woken for the idle P1.
    sim = _sim(consts, procs=2)
    _take_p(sim, 0)
    (g,) = _gs(sim, 1)
    sim.gstatus[g] = engine.GS_WAITING
    sim.netready.append(g)
    sim.schedtick[0] = 1
    assert sim.find_runnable(0) == (g, False)
    assert sim.pidle == [1] and sim.nmspinning == 0


def _retaken_syscall(sim: Sim) -> int:
    """A G in a syscall on P0 whose P sysmon handed off (idle now)."""
    _take_p(sim, 0)
    (g,) = _gs(sim, 1)
    sim.pg[0], sim.gp[g], sim.gm[g] = g, 0, sim.pm[0]
    sim.gstatus[g] = engine.GS_RUNNING
    sim.entersyscall(g, 1000)
    sim.handoffp(0)
    return g


def test_a_syscall_whose_p_was_taken_resumes_on_the_top_idle_p_not_its_old_one(consts: Constants) -> None:
    sim = _sim(consts, procs=3)
    g = _retaken_syscall(sim)
    _take_p(sim, 2)
    sim.pidleput(2)  # another P went idle after P0
    top = sim.pidle[-1]
    assert top == 2 and 0 in sim.pidle
    sim.exitsyscall(g)  # Go 1.27's exitsyscallTryGetP: pidleget, whichever P that is
    assert sim.gp[g] == top and sim.pstatus[0] == engine.PS_IDLE


def test_a_syscall_takes_its_old_p_back_from_a_thread_now_in_a_syscall_on_it(consts: Constants) -> None:
    sim = _sim(consts, procs=2)
    g = _retaken_syscall(sim)
    sim.pidle.remove(0)
    sim.npidle -= 1
    (h,) = _gs(sim, 1)
    sim.pstatus[0], sim.pm[0] = PS_RUN, sim.new_m()
    sim.pg[0], sim.gp[h], sim.gm[h], sim.gstatus[h] = h, 0, sim.pm[0], engine.GS_RUNNING
    sim.entersyscall(h, 1000)  # P0's new thread is in a syscall now
    sim.exitsyscall(g)  # setBlockOnExitSyscall(oldp) + takeP: P0 comes back, P1 stays idle
    assert sim.gp[g] == 0 and sim.pg[0] == g and 1 in sim.pidle
    sim.exitsyscall(h)  # h's P is gone: it takes the idle P
    assert sim.gp[h] == 1
    sim.check_invariants()


def test_netpoll_on_a_p_keeps_the_ready_gs_it_cannot_hand_to_idle_ps(consts: Constants) -> None:
    sim = _sim(consts, procs=3)
    _take_p(sim, 0)
    _take_p(sim, 2)
    gs = _gs(sim, 4)
    for g in gs:
        sim.gstatus[g] = engine.GS_WAITING
    sim.netready.extend(gs)  # their fds became ready in this order
    sim.schedtick[0] = 1
    # findRunnable's netpoll on P0. netpollready pushes each G at the head of its list, so the
    # list runs from the last ready to the first: the head runs (list.pop()); injectglist gives
    # the next one to the global queue for the one idle P (and starts an M on it) and puts the
    # rest on P0's own queue, in list order.
    assert sim.find_runnable(0) == (gs[3], False)
    assert list(sim.globq) == [gs[2]] and list(sim.runq[0]) == [gs[1], gs[0]]
    assert sim.npidle == 0 and sim.pstatus[1] == PS_RUN
    tl = sim.rec.timeline(engine.T_START, sim.now + 1, 3)
    assert set(tl.flows.filter(tl.flows["g"].is_in(gs))["from_p"].to_list()) == {0}  # unblocked on P0


def test_a_woken_m_shows_on_its_p_only_when_it_runs(consts: Constants) -> None:
    from goblueprint.model import measure

    prog = Program()
    prog.add_template("main.main", [(P.CPU, 1000, 0), (P.SPAWN, 1, 1), (P.CPU, 100_000, 0)])
    prog.add_template("main.child", [(P.CPU, 10_000, 0)])
    prog.roots.append((0, 0))
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    spawn = tl.flows.filter(tl.flows["g"] == 2)
    t0 = int(spawn["from_time"][0])
    # newproc's wakep wakes an M for P1; as in a trace (ProcStart from the woken thread's
    # acquirep) P1 stays idle until that M runs, and the child waits that long on an idle P.
    p1 = tl.spans.filter((tl.spans["lane_kind"] == 1) & (tl.spans["lane_id"] == 1)).sort("start")
    first_run = p1.filter(p1["state"] == int(engine.State.P_RUNNING))
    assert int(first_run["start"][0]) == t0 + sim.k.wake_m_ns
    assert spawn["to_p"].to_list() == [1]
    assert measure.idle_p_while_runnable(tl) == 2 * sim.k.wake_m_ns  # main waited for its M too


def _sysmon_events(sim: Sim) -> list[tuple[int, int, int]]:
    return sorted((t, a, b) for t, _, k, a, b in sim.heap if k == engine.EV_SYSMON and a == sim.sysmon_epoch)


def test_idle_sysmon_sleeps_to_the_next_timer_and_keeps_its_backed_off_delay(consts: Constants) -> None:
    sim = _sim(consts, procs=2)
    sim.sysmon_delay, sim.sysmon_idle = consts.sysmon_max_sleep_us, 10 * consts.sysmon_idle_ticks
    g = _sleeping(sim, 0)
    fires = sim.now + 50_000_000
    sim.push(fires, engine.EV_WAKE_TIMER, g)
    sim.sysmon()  # every P idle: sysmonwait until the timer
    # notetsleep's futex wait times out late by the timer slack, as a nanosleep does.
    woken = fires + Costs().timer_slack_ns
    assert sim.sysmon_parked and _sysmon_events(sim) == [(woken, sim.sysmon_epoch, 1)]
    sim.startm(sim.pidleget(), False, sim.k.wake_m_ns)  # a P started for other work: no notewakeup
    assert sim.sysmon_parked and _sysmon_events(sim) == [(woken, sim.sysmon_epoch, 1)]
    sim.now = woken
    sim.heap = [e for e in sim.heap if e[2] != engine.EV_SYSMON]  # the loop took that event
    sim.sysmon(resumed=True)  # woken by its timeout: idle and delay are not reset
    assert sim.sysmon_delay == consts.sysmon_max_sleep_us
    assert sim.sysmon_wakeups == 1  # counted as the lab does, per return from usleep: not the wait
    after = woken + consts.sysmon_max_sleep_us * 1000 + Costs().timer_slack_ns
    assert _sysmon_events(sim) == [(after, sim.sysmon_epoch, 0)]


def test_sysmons_usleep_lasts_its_delay_plus_the_timer_slack(consts: Constants) -> None:
    # sysmon's usleep(delay) is a nanosleep, which Linux ends up to its timer slack late (50 µs
    # for a normal thread): its 20 µs sleeps last ~70 µs, so the sysmon_idle_ticks short ones
    # before it backs off take 3.5 ms, not 1 ms, and it wakes that much less often.
    sim = _sim(consts, procs=1)
    _take_p(sim, 0)  # a G runs: sysmon keeps sleeping, never waits
    (g,) = _gs(sim, 1)
    sim.pg[0], sim.gp[g], sim.gm[g], sim.gstatus[g] = g, 0, sim.pm[0], engine.GS_RUNNING
    gaps = []
    for _ in range(consts.sysmon_idle_ticks + 2):
        sim.heap = [e for e in sim.heap if e[2] != engine.EV_SYSMON]  # the loop took that event
        sim.sysmon()
        ((t, _, _),) = _sysmon_events(sim)
        gaps.append(t - sim.now)
        sim.now = t
    slack = Costs().timer_slack_ns
    short = consts.sysmon_min_sleep_us * 1000
    assert gaps == [short + slack] * consts.sysmon_idle_ticks + [2 * short + slack, 4 * short + slack]
    assert sim.sysmon_wakeups == consts.sysmon_idle_ticks + 2 and sim.preemptions == 0


def test_a_syscall_wakes_a_waiting_sysmon_and_resets_it(consts: Constants) -> None:
    sim = _sim(consts, procs=2)
    sim.sysmon_delay, sim.sysmon_idle = consts.sysmon_max_sleep_us, 10 * consts.sysmon_idle_ticks
    sim.sysmon()  # no timer at all: sysmonwait up to forcegcperiod/2 (and the timer slack)
    timeout = sim.now + consts.sysmon_wait_max_ns + Costs().timer_slack_ns
    assert _sysmon_events(sim) == [(timeout, sim.sysmon_epoch, 1)]
    _take_p(sim, 0)
    (g,) = _gs(sim, 1)
    sim.pg[0], sim.gp[g], sim.gm[g], sim.gstatus[g] = g, 0, sim.pm[0], engine.GS_RUNNING
    sim.entersyscall(g, 1000)  # entersyscallWakeSysmon
    assert not sim.sysmon_parked and sim.sysmon_delay == consts.sysmon_min_sleep_us and sim.sysmon_idle == 0
    assert _sysmon_events(sim) == [(sim.now, sim.sysmon_epoch, 1)]


@pytest.mark.parametrize(
    "ops",
    [[(P.CPU, 1000, 0), (P.YIELD, 0, 0), (P.CPU, 1000, 0)], [(P.CPU, 30_000_000, 0)]],
    ids=["Gosched", "preemption"],
)
def test_gosched_and_preemption_end_in_wakep(consts: Constants, ops: list) -> None:
    # goschedImpl puts the G on the global queue and, with an idle P and no spinning M,
    # wakes an M for it (wakep): the only wakep of this run, when the G stopped.
    prog = Program()
    prog.add_template("main.main", ops)
    prog.roots.append((0, 0))
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    requeued = tl.flows.filter(tl.flows["kind"] == int(FlowKind.REQUEUE))["from_time"].to_list()
    d = sim.rec.decisions()
    assert len(requeued) == 1 and d.filter(d["point"] == "wakep")["time"].to_list() == requeued


@pytest.mark.parametrize("waker_ns", [20_000, 2_000])
def test_goschedimpl_wakes_a_thread_with_the_g_on_the_global_queue_then_schedules(
    consts: Constants, waker_ns: int
) -> None:
    # goschedImpl: globrunqput(gp); wakep(); schedule(). The yielding M's futex wake (the
    # waker's cost) comes before its schedule(), with the G on the global queue all along:
    # a woken M that runs first takes it (here after 5 µs, on P1); else the yielding M does,
    # once its wake is paid. (Holding the G the M picked while it paid kept it from the
    # woken M, and made every turn of a Gosched loop cost a wake-up.)
    prog = Program()
    prog.add_template("main.main", [(P.CPU, 1000, 0), (P.YIELD, 0, 0), (P.CPU, 1000, 0)])
    prog.roots.append((0, 0))
    costs = Costs(waker_ns=waker_ns, wake_m_ns=5_000)
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1, costs=costs)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    runs = tl.spans.filter((tl.spans["lane_kind"] == 0) & (tl.spans["state"] == 0)).sort("start")
    assert runs.height == 2
    yielded, again = int(runs["end"][0]), int(runs["start"][1])
    if waker_ns > costs.wake_m_ns:
        assert int(runs["p"][1]) != int(runs["p"][0])
        assert again - yielded < waker_ns
    else:
        assert int(runs["p"][1]) == int(runs["p"][0])
        assert again - yielded == waker_ns + costs.schedule_ns


def _spinning_p0(consts: Constants, procs: int) -> Sim:
    """P0's M just found nothing local and began to spin (a round costs 1 µs); P1 runs."""
    prog = Program()
    prog.add_template("main.t0", [(P.CPU, 1000, 0)])
    sim = Sim(prog, consts, policies.resolve([]), procs, seed=7, costs=Costs(steal_ns=1000))
    _take_p(sim, 0)
    _take_p(sim, 1)
    sim.rec.state(engine.LP, 0, sim.now, engine.P_RUN, m=sim.pm[0])  # its G just stopped
    sim.schedule(0)
    return sim


def _p0_rounds(sim: Sim) -> None:
    """Run P0's pending scheduling events (its steal rounds) until it has a G or is idle."""
    while sim.pg[0] < 0 and sim.pstatus[0] == PS_RUN:
        sim.now, _, kind, a, b = heapq.heappop(sim.heap)
        if kind == engine.EV_SCHED and a == 0 and sim.pepoch[0] == b:
            sim.schedule(0)


def test_a_spinning_m_keeps_its_p_through_its_steal_rounds_and_wakes_nobody(consts: Constants) -> None:
    # stealWork's rounds take time; the M holds its P and counts in nmspinning all along, so
    # work readied meanwhile (a G to P1's runnext) makes wakep wake nobody for the idle P2.
    sim = _spinning_p0(consts, procs=3)
    t0 = sim.now
    assert sim.pstatus[0] == PS_RUN and sim.nmspinning == 1
    (g,) = _gs(sim, 1)
    sim.gstatus[g] = engine.GS_WAITING
    sim.ready(g, -1, 1, "test")
    assert sim.pidle == [2] and sim.pstatus[0] == PS_RUN and sim.nmspinning == 1
    sim.runnext[1] = -1  # (P1 runs it itself)
    sim.gstatus[g] = engine.GS_RUNNING
    _p0_rounds(sim)
    # Only after steal_tries rounds does it give the P up: the trace's fruitless findRunnable.
    tl = sim.rec.timeline(engine.T_START, sim.now + 1, 3)
    assert (
        spinning.fruitless_ns(tl).tolist() == [consts.steal_tries * 1000]
        and sim.now == t0 + consts.steal_tries * 1000
    )
    assert sim.pstatus[0] == engine.PS_IDLE and sim.nmspinning == 0


def test_a_spinning_m_takes_what_reached_the_global_queue_before_giving_its_p_up(consts: Constants) -> None:
    # After the last round findRunnable looks at the global queue once more under sched.lock
    # (before releasep): a G put there during the rounds runs on the P, which never idles.
    sim = _spinning_p0(consts, procs=2)
    (g,) = _gs(sim, 1)
    sim.globq.append(g)
    _p0_rounds(sim)
    assert (
        sim.pstatus[0] == PS_RUN and sim.pg[0] == g and sim.now == engine.T_START + consts.steal_tries * 1000
    )


def _refused_p0(consts: Constants, find_idle_ns: int) -> Sim:
    """P0's G just stopped and its M, with P1's M spinning, may not spin (2×1 ≥ 2 − 0 busy Ps);
    the replayed trace's fruitless findRunnable took FIND_IDLE_NS."""
    prog = Program()
    prog.add_template("main.t0", [(P.CPU, 1000, 0)])
    prog.find_idle_ns = find_idle_ns
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=7)
    _take_p(sim, 0)
    _take_p(sim, 1)
    sim.spinning[1], sim.nmspinning = True, 1
    sim.rec.state(engine.LP, 0, sim.now, engine.P_RUN, m=sim.pm[0])
    sim.schedule(0)
    return sim


def test_an_m_refused_a_spin_holds_its_p_as_long_as_the_traced_machine_s_did(consts: Constants) -> None:
    # findRunnable without a spin (netpoll(0), sched.lock, releasep) takes time too: the
    # replayed trace's median fruitless findRunnable, which it does not tell apart from a
    # spinner's; so the P's fruitless span is the trace's, not one schedule() pass.
    sim = _refused_p0(consts, 2100)
    t0 = sim.now
    assert sim.pstatus[0] == PS_RUN and sim.nmspinning == 1
    _p0_rounds(sim)
    assert sim.pstatus[0] == engine.PS_IDLE and sim.now == t0 + 2100 - sim.k.schedule_ns
    tl = sim.rec.timeline(engine.T_START, sim.now + 1, 2)
    assert spinning.fruitless_ns(tl).tolist() == [2100 - sim.k.schedule_ns]


def test_an_m_refused_a_spin_takes_what_reached_the_global_queue_before_giving_its_p_up(
    consts: Constants,
) -> None:
    # Under sched.lock, before releasep, it looks at the global queue once more.
    sim = _refused_p0(consts, 2100)
    (g,) = _gs(sim, 1)
    sim.globq.append(g)
    _p0_rounds(sim)
    assert sim.pstatus[0] == PS_RUN and sim.pg[0] == g


def test_an_m_giving_its_p_up_polls_the_network_and_runs_what_became_ready(consts: Constants) -> None:
    # A G's fd becomes ready while P0's M spins and P1 runs (no P idle, so no M blocks in
    # netpoll). After its rounds the M drops P0 and, the one M without a P, blocks in netpoll
    # (findRunnable's end), which returns at once: it takes P0 back and runs the G itself —
    # no thread woken, and the G does not wait for another P's poll or sysmon's.
    sim = _spinning_p0(consts, procs=2)
    t0, m0 = sim.now, sim.pm[0]
    (g,) = _gs(sim, 1)
    sim.gstatus[g] = engine.GS_WAITING
    sim.netwaiters += 1
    sim.net_ready(g)
    assert sim.netready == [g] and sim.pstatus[0] == PS_RUN
    _p0_rounds(sim)
    assert sim.pg[0] == g and sim.pm[0] == m0 and not sim.netready
    assert sim.now == t0 + consts.steal_tries * 1000 + sim.k.schedule_ns
    tl = sim.rec.timeline(engine.T_START, sim.now + 1, 2)
    flow = tl.flows.filter(tl.flows["g"] == g)
    assert flow["from_p"].to_list() == [0] and flow["to_p"].to_list() == [0]
    sim.check_invariants()


def _stw_preempting_two(consts: Constants, reason: str = "stop-the-world (GC)") -> Sim:
    prog = Program()
    prog.add_template("main.main", [(P.CPU, 10_000, 0), (P.STW, 0, 0), (P.CPU, 100_000, 0)])
    for i in (1, 2):
        prog.add_template(f"main.busy{i}", [(P.CPU, 1_000_000, 0)])
    prog.roots += [(0, 0), (0, 1), (0, 2)]
    prog.stw = [(0, 50_000, reason)]
    sim = Sim(prog, consts, policies.resolve([]), 3, seed=1)
    sim.run()
    return sim


def test_gs_a_stop_the_world_preempts_stay_on_their_ps_runnext(consts: Constants) -> None:
    # goschedImpl with gcwaiting: runqput(pp, gp, true), "so it can keep running immediately
    # after the STW" on its own P; through the global queue they would swap Ps.
    sim = _stw_preempting_two(consts)
    tl = sim.rec.timeline(engine.T_START, sim.end, 3)
    runs = tl.spans.filter((tl.spans["lane_kind"] == 0) & (tl.spans["state"] == 0))
    stopped = tl.flows.filter(tl.flows["kind"] == int(FlowKind.REQUEUE))
    assert stopped.height == 2
    assert all(runs.filter(runs["lane_id"] == g)["p"].n_unique() == 1 for g in stopped["g"].to_list())


@pytest.mark.parametrize(
    ("version", "global_queue"), [("1.22.10", True), ("1.25.5", True), ("1.26.0", False)]
)
def test_before_go_1_26_a_stop_the_world_preempts_to_the_global_queue(
    consts: Constants, version: str, global_queue: bool
) -> None:
    # Go 1.22-1.25's goschedImpl has no gcwaiting case: globrunqput for every preempted G.
    # After the stop both Ps find their local queues empty and take from the global queue
    # (the 1.26 rule runs each G from its own P's runnext), and here the two Gs swap Ps.
    sim = _stw_preempting_two(replace(consts, go_version=version))
    dec = sim.rec.decisions()
    took = dec.filter((dec["point"] == "next_g") & (dec["reason"] == "local queue empty")).height
    assert took == (2 if global_queue else 0)
    tl = sim.rec.timeline(engine.T_START, sim.end, 3)
    runs = tl.spans.filter((tl.spans["lane_kind"] == 0) & (tl.spans["state"] == 0))
    stopped = tl.flows.filter(tl.flows["kind"] == int(FlowKind.REQUEUE))["g"].to_list()
    assert [runs.filter(runs["lane_id"] == g)["p"].n_unique() for g in stopped] == [
        2 if global_queue else 1
    ] * 2


def test_a_stop_the_world_s_preemptions_are_counted_as_the_trace_counts_them(consts: Constants) -> None:
    # stopTheWorldWithSema's preemptall stops each running G in gopreempt_m, goschedImpl(gp,
    # true): the trace records a "preempted" GoStop, as for sysmon's, and measure counts both.
    from goblueprint.model import measure

    sim = _stw_preempting_two(consts)
    tl = sim.rec.timeline(engine.T_START, sim.end, 3)
    stopped = tl.flows.filter(tl.flows["kind"] == int(FlowKind.REQUEUE))
    assert [tl.strings[x] for x in stopped["label"].to_list()] == ["preempted"] * 2
    assert measure.from_timeline(tl, 3)["preemptions"] == 2
    assert sim.preemptions == 0  # sysmon's own count


def test_gc_mark_done_preempts_every_running_g_before_it_stops_the_world(consts: Constants) -> None:
    # gcMarkDone runs forEachP (flush each P's write barrier buffer) before it stops the world
    # for mark termination: its preemptall stops the busy Gs through gopreempt_m, to the global
    # queue, so the stop finds their Ps with no G, and after it they are taken from the global
    # queue (a plain stop keeps them on their Ps' runnext, Go 1.26 on).
    def taken_from_global(reason: str) -> int:
        sim = _stw_preempting_two(consts, reason)
        dec = sim.rec.decisions()
        tl = sim.rec.timeline(engine.T_START, sim.end, 3)
        stopped = tl.flows.filter(tl.flows["kind"] == int(FlowKind.REQUEUE))
        stw = tl.spans.filter(tl.spans["lane_kind"] == int(engine.LSTW))
        assert stopped.height == 2 and set(stopped["from_time"].to_list()) == {int(stw["start"][0])}
        return dec.filter((dec["point"] == "next_g") & (dec["reason"] == "local queue empty")).height

    assert taken_from_global("stop-the-world (GC)") == 0
    assert taken_from_global("stop-the-world (GC mark termination)") == 2


def test_gc_mark_termination_waits_for_every_p_s_safe_point_once_the_world_runs_again(
    consts: Constants,
) -> None:
    # gcMarkTermination, after startTheWorldWithSema, runs forEachP (flush every P's mcache):
    # the Ps restarted for the two preempted Gs have a woken M that has run nothing yet, so they
    # are waited for (every running G preempted again each 100 µs meanwhile) until those run.
    prog = Program()
    prog.add_template("main.main", [(P.CPU, 10_000, 0), (P.STW, 0, 0), (P.CPU, 100_000, 0)])
    for i in (1, 2):
        prog.add_template(f"main.busy{i}", [(P.CPU, 1_000_000, 0)])
    prog.roots += [(0, 0), (0, 1), (0, 2)]
    prog.stw = [(0, 50_000, "stop-the-world (GC mark termination)")]
    sim = Sim(prog, consts, policies.resolve([]), 3, seed=1)
    waited: list[list[int]] = []
    start_the_world = sim.start_the_world

    def spy(i: int) -> None:
        start_the_world(i)
        waited.append(sorted(sim.safepoint_wait))

    sim.start_the_world = spy  # type: ignore[method-assign]
    sim.run()
    assert waited == [[1, 2]] and not sim.safepoint_wait


def _for_each_p_with_a_late_m(consts: Constants, cpus: int, late_ns: int) -> tuple[Sim, int]:
    """P0 runs the caller of forEachP, P1 a busy G, and P2 is handed to an M woken LATE_NS before it
    runs (with CPUS: one already waiting for a CPU, late_ns 0). Runs 1 ms; returns the busy G."""
    prog = Program()
    prog.add_template("runtime.gcBgMarkWorker", [(P.CPU, 2_000_000, 0)])
    prog.add_template("main.busy", [(P.CPU, 2_000_000, 0)])
    sim = Sim(prog, consts, policies.resolve([]), 3, seed=1, cpus=cpus)
    caller, busy = sim.new_g(0), sim.new_g(1)
    for p, g in ((0, caller), (1, busy)):
        _take_p(sim, p)
        sim.execute(p, g, False)
    sim.pidle.remove(2)
    sim.npidle -= 1
    sim.startm(2, False, late_ns)
    if cpus:
        sim.schedule(2)  # the woken M runs, and waits for a CPU: both run the other two Ms
        assert sim.cpuwait[2]
    sim.for_each_p(caller)
    sim.horizon = 1_000_000
    sim.run()
    return sim, busy


def _preempted(sim: Sim, g: int) -> list[int]:
    tl = sim.rec.timeline(engine.T_START, sim.now, sim.procs)
    fl = tl.flows.filter((tl.flows["kind"] == int(FlowKind.REQUEUE)) & (tl.flows["g"] == g))
    return [t - engine.T_START for t in fl["from_time"].to_list()]


def test_for_each_p_preempts_every_running_g_again_until_every_p_ran_its_function(consts: Constants) -> None:
    # forEachPInternal waits in notetsleep(100 µs) and calls preemptall again each time it times
    # out while a P has not run the safe-point function: here P2's M runs (schedule()) only
    # 350 µs on, and the busy G is preempted each time, though its P ran the function at once.
    sim, busy = _for_each_p_with_a_late_m(consts, cpus=0, late_ns=350_000)
    tick = consts.safepoint_repreempt_ns
    assert tick == 100_000
    assert _preempted(sim, busy) == [0, tick, 2 * tick, 3 * tick]
    assert not sim.safepoint_wait
    caller_runs = sim.rec.timeline(engine.T_START, sim.now, 3).spans.filter(
        (pl.col("lane_kind") == 0) & (pl.col("lane_id") == 1)
    )
    assert caller_runs.height == 1  # the caller is never preempted by its own forEachP


def test_a_g_waiting_in_for_each_p_leaves_its_cpu(consts: Constants) -> None:
    # The machine's CPUs: forEachP's caller sleeps in notetsleep (the trace still shows its G
    # running), so an M waiting for one of the 2 CPUs runs at once, its P runs the function,
    # and nobody is preempted again; counted on its CPU, that M would wait out the OS's slice
    # (1.5 ms) with the busy G preempted every 100 µs meanwhile.
    sim, busy = _for_each_p_with_a_late_m(consts, cpus=2, late_ns=0)
    assert _preempted(sim, busy) == [0]
    assert not sim.safepoint_wait and not sim.cpuwait[2]


def test_gosched_if_busy_yields_only_while_no_p_is_idle(consts: Constants) -> None:
    # bgsweep's runtime.goschedIfBusy returns at once while a P is idle (npidle > 0).
    def yields(busy_too: bool) -> int:
        prog = Program()
        prog.add_template("runtime.bgsweep", [(P.CPU, 20_000, 0), (P.YIELD, 1, 0), (P.CPU, 1000, 0)])
        prog.add_template("main.busy", [(P.CPU, 100_000, 0)])
        prog.roots += [(0, 0), (0, 1)] if busy_too else [(0, 0)]
        sim = Sim(prog, consts, policies.resolve([]), 2, seed=1)
        sim.run()
        tl = sim.rec.timeline(engine.T_START, sim.end, 2)
        return tl.flows.filter(tl.flows["kind"] == int(FlowKind.REQUEUE)).height

    assert yields(busy_too=False) == 0 and yields(busy_too=True) == 1


def _net_waiting(sim: Sim, n: int) -> list[int]:
    gs = _gs(sim, n)
    for g in gs:
        sim.gstatus[g] = engine.GS_WAITING
        sim.netwaiters += 1
    return gs


def _run_until(sim: Sim, kind: int) -> tuple[int, int, int]:
    """Pop the model's events up to the first of KIND (dropping the others): its (time, a, b)."""
    while True:
        t, _, k, a, b = heapq.heappop(sim.heap)
        if k == kind:
            sim.now = t
            return t, a, b


def test_a_woken_netpoll_m_takes_every_fd_ready_by_the_time_it_runs(consts: Constants) -> None:
    # Both Ps idle, so an M is blocked in netpoll. The first ready fd wakes it; a second
    # becomes ready before it runs. epoll_wait, when the thread runs, returns both: it takes
    # P0 (the top idle P), runs the list's head (the last ready) and injectglist hands the
    # other to the global queue with an M for the idle P1.
    sim = _sim(consts, procs=2)
    a, b = _net_waiting(sim, 2)
    sim.net_ready(a)
    sim.now += 1000
    sim.net_ready(b)  # the poller is woken already: nobody else polls (sched.lastpoll == 0)
    _, g, p = _run_until(sim, engine.EV_POLLED)
    sim.polled(g, p)
    assert p == 0 and sim.held[0] == b and not sim.runq[0] and list(sim.globq) == [a] and not sim.netready
    assert sim.pstatus[1] == PS_RUN and sim.npidle == 0  # startIdle: an M for P1
    tl = sim.rec.timeline(engine.T_START, sim.now + 1, 2)
    assert sorted(tl.flows["g"].to_list()) == [a, b] and set(tl.flows["from_p"].to_list()) == {0}
    sim.check_invariants()


def test_the_g_netpoll_returns_runs_before_the_timers_that_expired_meanwhile(consts: Constants) -> None:
    # Both Ps idle: an fd becomes ready and wakes the M blocked in netpoll; before it runs, a
    # timer on P0's heap expires. epoll_wait returns the G; findRunnable takes the top idle P
    # (P0) and returns that G at once (list.pop()), not going back to its top, so the timer
    # is run by P0's next timers.check, after the G. (The model ran the timer first: its G on
    # runnext went ahead, and the polled G waited behind it in P0's queue.)
    sim = _sim(consts, procs=2)
    (n,) = _net_waiting(sim, 1)
    s = _sleeping(sim, 0)
    sim.net_ready(n)
    sim.now += 1000
    sim.timer_fired(s)
    _, g, p = _run_until(sim, engine.EV_POLLED)
    sim.polled(g, p)
    sim.schedule(0)
    assert p == 0 and sim.pg[0] == n and sim.gstatus[s] == engine.GS_WAITING and sim.ptimers[0] == [s]
    sim.park(n, sim.rec.sid("network"))  # n waits again: P0's findRunnable runs the timer
    sim.schedule(0)
    assert s in (sim.pg[0], sim.held[0])  # (held while P0's M pays the wake-up its ready() made)


def test_no_p_polls_the_network_while_the_woken_poller_has_not_run(consts: Constants) -> None:
    # findRunnable polls only while sched.lastpoll != 0, i.e. no M is in netpoll; the one
    # woken from it and not yet run takes the ready Gs when it runs. So P1, with nothing to
    # run, spins rather than take the G, and its M, giving P1 up, does not poll either.
    sim = _sim(consts, procs=2)
    a, b = _net_waiting(sim, 2)
    sim.net_ready(a)  # an M blocked in netpoll is woken for P0 ...
    _take_p(sim, 1)
    sim.net_ready(b)  # ... and b's fd becomes ready before it runs
    sim.schedtick[1] = 1
    assert sim.find_runnable(1) == (engine.SPINNING, False) and sim.netready == [b]
    sim.spinround[1] = 0
    sim.stop_m(1)
    assert sim.pstatus[1] == engine.PS_IDLE and sim.netready == [b]


@pytest.mark.parametrize("readied", ["created", "woken"])
def test_a_replayed_wake_up_takes_what_the_trace_measured_at_its_readying(
    consts: Constants, readied: str
) -> None:
    # A replay knows how long the traced machine took to run the thread woken for a readying
    # (model.wakeups), keyed by the point of the program: the child's creation, or the end of
    # its wait. The thread woken for P1 there runs that much later; elsewhere the constant.
    prog = Program()
    prog.add_template("main.main", [(P.CPU, 1000, 0), (P.SPAWN, 1, 1), (P.CPU, 200_000, 0), (P.WAKE, 1, 0),
                                    (P.CPU, 1_000_000, 0)])  # fmt: skip
    prog.add_template("main.child", [(P.CPU, 1000, 0), (P.BLOCK, 0, 0), (P.CPU, 1000, 0)])
    prog.roots.append((0, 0))
    key = (1, -1) if readied == "created" else (1, 1)
    prog.wake_ns = {key: 300_000}
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    readyings = tl.flows.filter(tl.flows["g"] == 2).sort("from_time")["from_time"].to_list()
    p1 = tl.spans.filter((tl.spans["lane_kind"] == 1) & (tl.spans["lane_id"] == 1)).sort("start")
    proc_starts = p1.filter(p1["state"] == int(engine.State.P_IDLE))["end"].to_list()[: len(readyings)]
    if readied == "created":  # (the child is not blocked yet when main wakes it: no second readying)
        assert readyings[0] + 300_000 == proc_starts[0]
    else:
        assert [t + d for t, d in zip(readyings, (sim.k.wake_m_ns, 300_000), strict=True)] == proc_starts


def test_a_netpoll_m_whose_p_a_stop_took_puts_the_ready_gs_on_the_global_queue(consts: Constants) -> None:
    # The M woken from netpoll has not run when the world stops: stopTheWorld takes its P
    # (stopped Ps leave the idle list). When it runs, pidleget finds no P, so injectglist
    # puts what it polled on the global queue, with no P, and no idle P holds a G.
    sim = _sim(consts, procs=2)
    (a,) = _net_waiting(sim, 1)
    sim.net_ready(a)
    sim.prog.stw.append((0, 100_000, "stop-the-world (test)"))
    sim.stop_the_world(len(sim.prog.stw) - 1, -1)
    _, g, p = _run_until(sim, engine.EV_POLLED)
    sim.polled(g, p)
    assert list(sim.globq) == [a] and not sim.runq[p] and sim.runnext[p] < 0 and sim.poller == -1
    tl = sim.rec.timeline(engine.T_START, sim.now + 1, 2)
    assert tl.flows.filter(tl.flows["g"] == a)["from_p"].to_list() == [-1]
    sim.check_invariants()


def test_a_root_goroutine_has_no_creation_flow(consts: Constants) -> None:
    # Roots (main, or the Gs a replayed trace starts with) are made by no G of the program; a
    # real trace has no CREATE flow for them either (every one there has a parent G), so the
    # model's would be samples of its wake-up cost in its latency percentiles alone.
    prog = Program()
    prog.add_template("main.main", [(P.CPU, 1000, 0), (P.SPAWN, 1, 1), (P.CPU, 50_000, 0)])
    prog.add_template("main.child", [(P.CPU, 1000, 0)])
    prog.add_template("runtime.bgsweep", [(P.CPU, 1000, 0)])
    prog.roots += [(0, 0), (0, 2)]
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    assert tl.flows.select("kind", "g", "from_g").rows() == [(int(FlowKind.CREATE), 3, 1)]


def _busy_machine(consts: Constants, cpus: int) -> tuple[Sim, int, int]:
    # 4 Ps on CPUS CPUs; P0 and P1 each run a G (their Ms hold both CPUs when CPUS is 2), and a
    # G readied on P0 makes wakep start a spinning M for an idle P. Returns (sim, that P, the G).
    prog = Program()
    prog.add_template("main.spin", [(P.CPU, 50_000_000, 0)])
    sim = Sim(prog, consts, policies.resolve([]), 4, seed=7, cpus=cpus)
    for p in (0, 1):
        _take_p(sim, p)
        (g,) = _gs(sim, 1)
        sim.execute(p, g, False)
    (g,) = _gs(sim, 1)
    sim.gstatus[g] = engine.GS_WAITING
    sim.ready(g, sim.pg[0], 0, "test")
    (woken,) = [p for p in range(4) if sim.pwaking[p]]
    assert sim.nmspinning == 1
    return sim, woken, g


def test_a_woken_m_waits_for_a_cpu_while_every_cpu_runs_an_m(consts: Constants) -> None:
    # The machine's rule (not proc.go's): with both CPUs running the Ms of P0 and P1, the thread
    # wakep woke is runnable but does not run. Its P stays handed to it and it stays counted in
    # nmspinning, so more readied work wakes nobody else; when P1's M leaves its CPU (its G
    # blocks in a syscall), the waiting M runs at once.
    sim, p, g = _busy_machine(consts, cpus=2)
    t, a, _ = _run_until(sim, engine.EV_SCHED)
    assert (a, t) == (p, engine.T_START + sim.k.wake_m_ns)
    sim.schedule(p)
    assert sim.cpuwait[p] and sim.pwaking[p] and sim.nmspinning == 1 and sim.runnext[0] == g
    (h,) = _gs(sim, 1)
    sim.gstatus[h] = engine.GS_WAITING
    sim.ready(h, sim.pg[1], 1, "test")
    assert sim.npidle == 1  # wakep woke nobody: a spinning M (the waiting one) exists
    freed = sim.now = sim.now + 2_000
    sim.entersyscall(sim.pg[1], 1_000_000)
    t, a, _ = _run_until(sim, engine.EV_SCHED)
    assert (a, t) == (p, freed)
    sim.schedule(p)
    assert not sim.cpuwait[p] and not sim.pwaking[p]


def test_a_woken_m_that_finds_no_free_cpu_runs_after_the_os_s_slice(consts: Constants) -> None:
    sim, p, _ = _busy_machine(consts, cpus=2)
    _run_until(sim, engine.EV_SCHED)
    sim.schedule(p)
    t, a, _ = _run_until(sim, engine.EV_SCHED)
    assert (a, t) == (p, engine.T_START + sim.k.wake_m_ns + sim.k.cpu_slice_ns)
    sim.schedule(p)
    assert not sim.cpuwait[p] and not sim.pwaking[p]


def test_a_woken_m_runs_at_once_with_a_cpu_free_or_cpus_not_modelled(consts: Constants) -> None:
    for cpus in (3, 0):
        sim, p, _ = _busy_machine(consts, cpus=cpus)
        _run_until(sim, engine.EV_SCHED)
        sim.schedule(p)
        assert not sim.cpuwait[p] and not sim.pwaking[p], cpus


def _sleeper_latencies(consts: Constants, samples: tuple[int, ...], costs: Costs | None = None) -> list[int]:
    """From each of a sleeper's 40 timers, run by the woken poller on 2 Ps, to the G's start,
    the replayed trace's waker costs SAMPLES (their median 9 µs)."""
    prog = Program()
    prog.add_template("main.sleeper", [(P.CPU, 1000, 0), (P.SLEEP, 100_000, 0)] * 40 + [(P.CPU, 1000, 0)])
    prog.roots.append((0, 0))
    prog.waker_ns, prog.waker_samples_ns = 9_000, samples
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1, costs=costs)
    sim.run(check_every=1)
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    wake = tl.flows.filter(tl.flows["label"] == tl.strings.index("unblock (sleep)"))
    return (wake["to_time"] - wake["from_time"]).to_list()


def test_each_waker_cost_is_drawn_from_the_trace_s_when_it_measured_enough(consts: Constants) -> None:
    # Each timer's wakep wakes a thread for the idle P: the poller pays one of the trace's
    # measured costs (model.wakecost.costs_ns), drawn, not their median every time; with fewer
    # than MIN_DRAWN_WAKER_COSTS of them, or Costs given, the one figure.
    measured = (3_000, 9_000, 27_000)
    drawn = _sleeper_latencies(consts, measured * 10)
    assert len(drawn) == 40 and set(drawn) == set(measured)
    assert set(_sleeper_latencies(consts, measured * 9)) == {9_000}
    assert set(_sleeper_latencies(consts, measured * 10, Costs(waker_ns=7_000))) == {7_000}
