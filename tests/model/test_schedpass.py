"""schedule() passes measured from a timeline, checked where the truth is known: the model's own.

A replay draws each pass after a G stops from the trace's passes that found their G at hand
(model.schedpass). Run on the model's own timeline, the measure must find exactly the passes
the model drew, but for the ones it takes for the OS's stalls.
"""

from __future__ import annotations

from collections import Counter

import polars as pl
import pytest

from goblueprint.model import engine, policies, replay, schedpass
from goblueprint.model import program as P
from goblueprint.model.constants import Constants, Costs
from goblueprint.model.osstalls import OsStalls
from goblueprint.timeline.model import LaneKind

PASSES = (300, 700, 1_100)  # distinct from each other and from the constant's 100 ns
STALL = 50_000  # over STALL_FACTOR times their median: a stall of the OS, not a pass


def _turns(
    consts: Constants, samples: tuple[int, ...], costs: Costs | None = None, procs: int = 1
) -> engine.Sim:
    """Three Gs taking turns by Gosched on PROCS Ps, the trace's passes SAMPLES."""
    prog = P.Program()
    prog.add_template("main.worker", [(P.CPU, 2_000, 0), (P.YIELD, 0, 0)] * 200)
    prog.roots += [(0, 0)] * 3
    prog.procs = procs
    prog.schedule_samples_ns = samples
    sim = engine.Sim(prog, consts, policies.resolve([]), procs, seed=1, decisions=False, costs=costs)
    sim.run()
    return sim


def test_the_model_s_passes_measured_from_its_timeline_are_its_own(consts: Constants) -> None:
    samples = PASSES * 10 + (STALL,)
    sim = _turns(consts, samples)
    measured = Counter(schedpass.at_hand_ns(sim.rec.timeline(engine.T_START, sim.end, 1)).tolist())
    # Every G that stopped left the next one (or itself) at hand: each pass measured is one drawn.
    assert set(measured) == set(PASSES)
    assert sum(measured.values()) > 500
    # And the draws spread over the samples (a third each, give or take).
    assert all(n > sum(measured.values()) / 5 for n in measured.values())


def test_a_long_pass_is_the_os_s_stall_and_is_left_out(
    consts: Constants, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same run measured on its own timeline: the 50 us passes it drew are there, as spans of
    # a P running no G with a G at hand, and the measure leaves them out.
    sim = _turns(consts, PASSES * 10 + (STALL,) * 3)
    tl = sim.rec.timeline(engine.T_START, sim.end, 1)
    assert STALL not in schedpass.at_hand_ns(tl).tolist()
    monkeypatch.setattr(schedpass, "STALL_FACTOR", 1_000)
    assert STALL in schedpass.at_hand_ns(tl).tolist()


def test_passes_are_drawn_only_from_enough_samples_and_never_with_costs_given(consts: Constants) -> None:
    def passes(sim: engine.Sim) -> set[int]:
        return set(schedpass.at_hand_ns(sim.rec.timeline(engine.T_START, sim.end, 1)).tolist())

    enough = PASSES * (engine.MIN_DRAWN_PASSES // len(PASSES) + 1)
    assert passes(_turns(consts, enough)) == set(PASSES)
    # Too few samples stand for no machine, and costs given are the model's calibration: the constant.
    assert passes(_turns(consts, PASSES)) == {Costs().schedule_ns}
    assert passes(_turns(consts, enough, costs=Costs())) == {Costs().schedule_ns}


def test_drawn_passes_break_a_lock_step_the_constant_holds(consts: Constants) -> None:
    # A G yielding in a loop on 4 Ps while main sleeps 100 us at a time, with the machine's
    # costs of a capture of that program (docs/model.md, "A goroutine that yields in a loop":
    # its fruitless findRunnable, a wake-up's cost to the waker, its wake-ups' spread). With
    # every pass 100 ns the P that lost the G spins in step with the one that holds it, finds
    # it on the global queue at each round's end and takes it: the two trade it every ~80 ns.
    # With the passes that machine took (64 ns, a fifth of them 128), one late look ends it.
    def migrations(samples: tuple[int, ...]) -> int:
        prog = P.Program()
        prog.add_template("main.main", [(P.SPAWN, 1, 1)] + [(P.SLEEP, 100_000, 0), (P.CPU, 2_000, 0)] * 100)
        prog.add_template("main.yield", [(P.CPU, 64, 0), (P.YIELD, 0, 0)] * 60_000)
        prog.roots.append((0, 0))
        prog.procs = 4
        prog.find_idle_ns, prog.waker_ns = 896, 4_032
        prog.wake_samples_ns = (3_000, 16_000, 16_000, 30_000, 2_000_000) * 8
        prog.schedule_samples_ns = samples
        sim = engine.Sim(prog, consts, policies.resolve([]), 4, seed=1, decisions=False)
        sim.run()
        return int(sim.rec.timeline(engine.T_START, sim.end, 4).flows["migrated"].sum())

    constant = migrations(())
    drawn = migrations(((64,) * 8 + (128,) * 2) * 4)
    assert constant > 10_000
    assert drawn < constant / 50


def test_a_stall_the_trace_shows_is_replayed_where_it_happened(consts: Constants) -> None:
    # Three Gs taking turns by Gosched on one P, and after A's 25th yield its M holds the P
    # 500 us with the next G at hand (a kernel recording's stall, Program.stall_after): on the
    # run's own timeline, a pass far longer than findRunnable takes to find a queued G.
    prog = P.Program()
    for name in ("main.a", "main.b", "main.c"):
        prog.roots.append((0, prog.add_template(name, [(P.CPU, 2_000, 0), (P.YIELD, 0, 0)] * 100)))
    prog.procs = 1
    prog.schedule_samples_ns = PASSES * 10
    prog.stall_after[(0, 50)] = 500_000
    sim = engine.Sim(prog, consts, policies.resolve([]), 1, seed=1, decisions=False)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, 1)
    assert 500_000 not in schedpass.at_hand_ns(tl).tolist()
    # The replay of that timeline holds the P as long after the same op of A's (less a median
    # pass, which the replay draws there as well), not a stall drawn anywhere, nor none.
    replayed = replay.from_timeline(tl)
    ((tmpl, op), ns), *more = replayed.stall_after.items()
    assert not more
    assert (replayed.names[tmpl], op) == ("main.a", 50)
    assert 500_000 - 400 <= ns <= 500_000 + 400
    again = engine.Sim(replayed, consts, policies.resolve([]), 1, seed=1, decisions=False)
    again.run()
    spans = again.rec.timeline(engine.T_START, again.end, 1).spans
    no_g = spans.filter((pl.col("lane_kind") == int(LaneKind.P)) & (pl.col("g") < 0))
    assert (no_g["end"] - no_g["start"]).max() >= 500_000
    # A kernel recording's measured stalls take their place.
    assert replay.from_timeline(tl, OsStalls()).stall_after == {}
