"""Replay of real traces of the project's Go programs: work conserved, metrics within tolerance.

The tolerances are the ones README.md states (measured on these traces). Migrations, thread
wake-ups and idle P spans are held only to the factor reached (docs/model.md, issue 14);
p99 latency is not held.
"""

from __future__ import annotations

import lzma
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from goblueprint.model import api, engine, measure, policies, replay
from goblueprint.model import program as P
from goblueprint.model.constants import Constants, Costs
from goblueprint.timeline.analysis import analyse
from goblueprint.timeline.model import LaneKind, State

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


@pytest.mark.parametrize("name", ["sched-go1.27", "sched-go1.22"])
@pytest.mark.parametrize("seed", [1, 2])
def test_replay_metrics_within_the_stated_tolerance(
    name: str, seed: int, consts: Constants, tmp_path: Path
) -> None:
    # README's tolerance table, measured on these committed traces; p99 latency and (on other
    # programs) preemptions are not within any tolerance yet and are not held; migrations only
    # to the factor reached (x1.5-x4.0 too many since runqgrab's sleep takes its time).
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
    assert 0.5 <= sim["preemptions"] / max(1, real["preemptions"]) <= 2
    assert abs(sim["wall_ns"] - real["wall_ns"]) <= 0.02 * real["wall_ns"]
    assert real["migrations"] <= sim["migrations"] <= 5 * real["migrations"]
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
    assert real["idle_p_spans"] < sim["idle_p_spans"] <= 2.0 * real["idle_p_spans"]
    # Thread wake-ups read the same way from both: the trace's run from microseconds to
    # milliseconds; the model's cost the one constant it is given, and never read longer.
    assert real["thread_wakeups"] > 0 and sim["thread_wakeups"] > 0
    assert sim["thread_wake_max_ns"] <= Costs().wake_m_ns < real["thread_wake_max_ns"]


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


def test_a_mostly_idle_trace_gets_few_preemptions(consts: Constants, tmp_path: Path) -> None:
    # gens sleeps most of its 2.5 s and the runtime preempted nothing. A sysmon woken at its
    # 20 µs tick by every started P (not the runtime's: only syscalls and startTheWorld wake
    # it) preempted over a hundred times here; README states 0 -> 3 and 1 (seeds 1, 2).
    trace = tmp_path / "gens.trace"
    trace.write_bytes(lzma.decompress((GOLDEN / "gens-go1.27.trace.xz").read_bytes()))
    tl = analyse(str(trace)).timeline
    prog = replay.from_timeline(tl)
    assert measure.from_timeline(tl, prog.procs)["preemptions"] == 0
    sim = measure.of_sim(api.simulate(prog, consts, policies.resolve([]), seed=1, decisions=False))
    assert sim["preemptions"] <= 5
