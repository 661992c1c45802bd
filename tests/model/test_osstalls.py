"""OS stalls in the model: a G's thread off its CPU while it runs, an M waiting for a CPU with a P.

Rules (STALL ops, Program.stall_after), their reading from a kernel join (model.osstalls,
on a synthetic join), the replay's cut of running spans, and one capture under perf end
to end (skipped where perf cannot record).
"""

from __future__ import annotations

import json
import lzma
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from goblueprint.errors import UsageError
from goblueprint.kernel.intervals import KState
from goblueprint.kernel.join import Clock, Joined
from goblueprint.model import engine, osstalls, policies, replay, schedpass
from goblueprint.model import program as P
from goblueprint.model.constants import Constants
from goblueprint.model.engine import Sim
from goblueprint.model.program import Program
from goblueprint.timeline.analysis import analyse
from goblueprint.timeline.model import FlowKind, LaneKind, State

MS = 1_000_000
HERE = Path(__file__).resolve().parent
GOLDEN = HERE.parent / "timeline" / "golden_builder"


def _g_runs(sim: Sim) -> pl.DataFrame:
    tl = sim.rec.timeline(engine.T_START, sim.end, sim.procs)
    return tl.spans.filter(
        (pl.col("lane_kind") == int(LaneKind.G)) & (pl.col("state") == int(State.G_RUNNING))
    ).sort("start")


def test_gcs_preemption_waits_for_the_stalled_thread_and_is_not_counted_as_sysmons(consts: Constants) -> None:
    # forEachP asks P1 to preempt G2 while its thread is off its CPU (a replayed stall): the
    # signal is handled when it runs again, at the stall's end, and every 100 µs meanwhile
    # preemptall asks again; the one preemption is GC's, not sysmon's (Sim.preemptions).
    stall = 450_000
    prog = Program()
    prog.add_template("runtime.gcBgMarkWorker", [(P.CPU, 2 * MS, 0)])
    prog.add_template("main.stalled", [(P.STALL, stall, 0), (P.CPU, MS, 0)])
    sim = Sim(prog, consts, policies.resolve([]), 2, seed=1)
    gs = [sim.new_g(0), sim.new_g(1)]
    for p, g in enumerate(gs):
        sim.pidle.remove(p)
        sim.npidle -= 1
        sim.pstatus[p] = engine.PS_RUN
        sim.pm[p] = sim.new_m()
        sim.execute(p, g, False)
    sim.for_each_p(gs[0])
    sim.horizon = 2 * MS
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.now, 2)
    stops = tl.flows.filter(pl.col("kind") == int(FlowKind.REQUEUE))
    assert stops["g"].to_list() == [gs[1]]
    assert stops["from_time"].to_list() == [engine.T_START + stall]
    assert sim.preemptions == 0 and not sim.safepoint_wait


def test_sysmons_preemption_waits_for_the_stalled_thread_to_run(consts: Constants) -> None:
    # One P: G1 computes 1 ms, its thread is off its CPU for 6 x forcePreemptNS, then 1 ms more;
    # G2 waits behind it. sysmon asks for G1's preemption during the stall (same schedtick for
    # forcePreemptNS), but the signal is handled only when the thread runs: at the stall's end.
    stall = 6 * consts.forcePreemptNS
    prog = Program()
    prog.add_template("main.stalled", [(P.CPU, MS, 0), (P.STALL, stall, 0), (P.CPU, MS, 0)])
    prog.add_template("main.other", [(P.CPU, MS, 0)])
    prog.roots += [(0, 0), (0, 1)]
    sim = Sim(prog, consts, policies.resolve([]), 1, seed=1)
    sim.run()
    runs = _g_runs(sim)
    first = runs.row(0, named=True)
    assert first["end"] - first["start"] == MS + stall  # preempted exactly as the stall ends
    assert sim.preemptions >= 1
    g2 = runs.filter(pl.col("lane_id") == 2)
    assert int(g2["start"].min()) >= first["end"]


def test_a_stop_the_world_mid_stall_leaves_no_stall_to_resume(consts: Constants) -> None:
    # The real stop waits for the stalled thread to run and stop its G: the stall is over when
    # the world starts again, and the G resumes with its next op, not the rest of the stall.
    prog = Program()
    prog.add_template("main.stalled", [(P.STALL, 20 * MS, 0), (P.CPU, MS, 0)])
    prog.roots.append((0, 0))
    prog.stw = [(5 * MS, 100_000, "stop-the-world (test)")]
    sim = Sim(prog, consts, policies.resolve([]), 1, seed=1)
    sim.run()
    # 5 ms stalled, the stop, then 1 ms of CPU: not the 15 ms of stall left.
    assert sim.end - engine.T_START < 10 * MS


def test_an_m_waiting_for_a_cpu_after_a_g_blocks_delays_its_ps_next_g(consts: Constants) -> None:
    prog = Program()
    prog.add_template("main.sleeper", [(P.CPU, MS, 0), (P.SLEEP, 50 * MS, 0)])
    prog.add_template("main.other", [(P.CPU, MS, 0)])
    prog.roots += [(0, 0), (0, 1)]
    base = Sim(prog, consts, policies.resolve([]), 1, seed=1)
    base.run()
    prog.stall_after[(0, 2)] = 5 * MS  # after the sleeper's op 1 (its SLEEP)
    sim = Sim(prog, consts, policies.resolve([]), 1, seed=1)
    sim.run()

    def gap(s: Sim) -> int:
        runs = _g_runs(s)
        g1_end = int(runs.filter(pl.col("lane_id") == 1)["end"].min())
        return int(runs.filter(pl.col("lane_id") == 2)["start"].min()) - g1_end

    assert gap(sim) - gap(base) == 5 * MS


def _joined(pieces: list[tuple], m_spans: list[tuple]) -> Joined:
    pc = pl.DataFrame(
        pieces, schema=["tid", "start", "end", "kstate", "mstate", "g", "p"], orient="row"
    ).cast({"kstate": pl.UInt8, "mstate": pl.UInt8})
    ms = pl.DataFrame(m_spans, schema=["lane_id", "start", "end", "state", "g", "p"], orient="row").cast(
        {"state": pl.UInt8}
    )
    return Joined(Clock(0, 0, 0), None, pl.DataFrame(), pc, ms, 1, 1)  # type: ignore[arg-type]


def test_stalls_are_read_under_running_gs_and_after_their_runs_while_the_m_keeps_its_p() -> None:
    run, idle = int(State.M_RUNNING), int(State.M_IDLE)
    m_spans = [
        (7, 0, 100, run, 5, 0),  # M7 runs G5 on P0
        (7, 100, 200, run, -1, 0),  # then schedules with P0, no G
        (7, 200, 300, idle, -1, -1),  # idles
        (7, 300, 400, run, -1, 1),  # started again with P1
    ]
    pieces = [
        (7, 40, 60, int(KState.PREEMPTED), run, 5, 0),  # under G5: a stall of G5
        (7, 120, 150, int(KState.PREEMPTED), run, -1, 0),  # P0 held, no G: after G5's run
        (7, 150, 155, int(KState.WOKEN), run, -1, 0),
        (7, 160, 170, int(KState.SLEEPING), run, -1, 0),  # runqgrab's usleep: the model times it
        (7, 310, 330, int(KState.PREEMPTED), run, -1, 1),  # after an idle stretch: not G5's
        (7, 220, 250, int(KState.SLEEPING), idle, -1, -1),  # no P: holds nothing
    ]
    st = osstalls.from_joined(_joined(pieces, m_spans))
    assert st.under_g == {5: [(40, 60)]}
    assert st.after_g == {(5, 100): 35}
    assert (st.sched_waits, st.sched_wait_ns) == (3, 55)


def test_a_recording_of_another_run_is_refused() -> None:
    j = _joined([], [(7, 0, 100, int(State.M_RUNNING), 5, 0)])
    j.matched_threads = 0
    j.kernel = type("K", (), {"directory": Path("elsewhere")})()  # type: ignore[assignment]
    with pytest.raises(UsageError, match="none of the trace's 1 threads"):
        osstalls.from_joined(j)


@pytest.fixture(scope="module")
def sched_tl(tmp_path_factory: pytest.TempPathFactory) -> object:
    trace = tmp_path_factory.mktemp("osstalls") / "sched-go1.27.trace"
    trace.write_bytes(lzma.decompress((GOLDEN / "sched-go1.27.trace.xz").read_bytes()))
    return analyse(str(trace)).timeline


@pytest.mark.slow
def test_replay_cuts_a_running_span_at_its_threads_stall_and_keys_the_wait_after_a_block(
    sched_tl: object,
) -> None:
    tl = sched_tl
    gs = tl.spans.filter(pl.col("lane_kind") == int(LaneKind.G)).sort(["lane_id", "start"])  # type: ignore[attr-defined]
    nxt = gs.with_columns(
        pl.col("state").shift(-1).over("lane_id").alias("next_state"),
        pl.col("start").shift(-1).over("lane_id").alias("next_start"),
    )
    # The longest run that ends in a wait at its end (a block, a sleep, the network).
    run = (
        nxt.filter(
            (pl.col("state") == int(State.G_RUNNING))
            & (pl.col("next_state") == int(State.G_WAITING))
            & (pl.col("next_start") == pl.col("end"))
        )
        .with_columns((pl.col("end") - pl.col("start")).alias("d"))
        .sort("d", descending=True)
        .row(0, named=True)
    )
    g, s, e = run["lane_id"], run["start"], run["end"]
    assert e - s > 1000
    plain = replay.from_timeline(tl)  # type: ignore[arg-type]
    stalls = osstalls.OsStalls(under_g={g: [(s + 100, s + 400)]}, after_g={(g, e): 777})
    prog = replay.from_timeline(tl, stalls)  # type: ignore[arg-type]
    tmpl = sorted(set(gs["lane_id"].to_list())).index(g)
    ops = prog.templates[tmpl]
    at = [i for i, (code, _, _) in enumerate(ops) if code == P.STALL]
    assert len(at) == 1 and ops[at[0]][1] == 300
    assert ops[at[0] - 1][0] == P.CPU and ops[at[0] + 1][0] in (P.CPU, P.WAKE, P.SPAWN, P.STW)

    def work(ops: list) -> int:
        return sum(a for code, a, _ in ops if code in (P.CPU, P.STALL))

    assert work(ops) == work(plain.templates[tmpl])  # the stall is cut from the CPU, not added
    assert [k for k, v in prog.stall_after.items() if v == 777] == list(prog.stall_after)
    ((t, pc),) = prog.stall_after
    assert t == tmpl and ops[pc - 1][0] in (P.BLOCK, P.SLEEP, P.NET)
    # Without a kernel recording the replay holds the trace's own stalls instead (a P held with
    # its next G at hand far longer than a schedule() pass, model.schedpass); with one, only its.
    own = schedpass.stalls_after(tl)  # type: ignore[arg-type]
    assert plain.stall_after and set(plain.stall_after.values()) <= set(own.values())


@pytest.mark.slow
def test_compare_with_a_kernel_recording_replays_every_stall_under_a_running_g(tmp_path: Path) -> None:
    from goblueprint.capture import capture
    from goblueprint.kernel import join as kjoin
    from goblueprint.kernel import perf

    probe = perf.probe(locks=False)
    if not probe.ok:
        pytest.skip(f"perf cannot record here: {'; '.join(probe.problems)}")
    # 8 Ps on this machine's cores: threads holding Ps are switched out under running Gs.
    out = tmp_path / "run"
    result = capture(
        ["go", "run", ".", "5000000"], out, procs=8, schedtrace_ms=0, kernel=True,
        cwd=HERE.parent / "kernel" / "goprogs" / "spin", no_stdin=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    assert result.ok, result.meta
    trace = out / "trace.out"
    tl = analyse(str(trace)).timeline
    joined = kjoin.join(tl, kjoin.load(out), kjoin.trace_clock(trace))
    pc = joined.pieces
    under = pc.filter(
        (pl.col("mstate") == int(State.M_RUNNING))
        & (pl.col("g") >= 0)
        & (pl.col("kstate") != int(KState.ON_CPU))
    )
    # What lies in the G's own running spans (a G the M lane shows running at the trace's start
    # may have no G-lane span there yet: the replay has no work of it to cut).
    runs = tl.spans.filter(
        (pl.col("lane_kind") == int(LaneKind.G)) & (pl.col("state") == int(State.G_RUNNING))
    )
    expected = 0
    for g, a, b in under.select("g", "start", "end").iter_rows():
        r = runs.filter(pl.col("lane_id") == g)
        lo, hi = r["start"].to_numpy(), r["end"].to_numpy()
        expected += int(np.clip(np.minimum(hi, b) - np.maximum(lo, a), 0, None).sum())
    assert expected > 0, "no thread was switched out under a running G: nothing to test"
    got = subprocess.run(
        [str(Path(__import__("sys").executable).parent / "goblueprint"), "simulate", "compare",
         "--trace", str(trace), "--kernel", str(out), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    st = json.loads(got.stdout)["os_stalls"]
    # Every stretch lies inside one of its G's running spans (the M span says so): all replayed.
    assert st["under_g_ns"] == expected
