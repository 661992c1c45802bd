"""Thread wake-up delays measured from a timeline, checked where the truth is known: the model's own.

The model records a replayed trace the way the runtime does (a woken thread's P stays idle
until the thread runs), and it knows when each thread it woke was started and ran. So
model.wakeups, run on the model's timeline, must find the delays the model drew — exactly
when nothing hides the wake-up, and never longer than the thread's own (see the module's
docstring for what the trace cannot say).
"""

from __future__ import annotations

import lzma
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from goblueprint.model import engine, policies, replay, wakeups, workload
from goblueprint.model.constants import Constants, Costs
from goblueprint.timeline.analysis import analyse

GOLDEN = Path(__file__).resolve().parent.parent / "timeline" / "golden_builder"
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "model-examples" / "workers.toml"
DRAWN = (8_000, 300_000, 2_000_000)  # distinct from each other and from the constant's use


def _spied(sim: engine.Sim) -> list[tuple[int, int, int]]:
    """(P, when startm woke a thread for it, when that thread runs) for every thread startm wakes."""
    starts: list[tuple[int, int, int]] = []
    startm: Callable[..., None] = sim.startm

    def spy(p: int, spinning: bool, delay: int, woken: bool = True) -> None:
        if woken:
            starts.append((p, sim.now, sim.now + delay))
        startm(p, spinning, delay, woken)

    sim.startm = spy  # type: ignore[method-assign]
    return starts


@pytest.mark.slow
def test_the_model_s_wake_ups_measured_from_its_timeline_are_its_own(
    consts: Constants, tmp_path: Path
) -> None:
    trace = tmp_path / "sched.trace"
    trace.write_bytes(lzma.decompress((GOLDEN / "sched-go1.27.trace.xz").read_bytes()))
    prog = replay.from_timeline(analyse(str(trace)).timeline)
    sim = engine.Sim(prog, consts, policies.resolve([]), prog.procs, 1, decisions=False,
                     costs=Costs(wake_m_samples_ns=DRAWN))  # fmt: skip
    starts = _spied(sim)
    sim.run()
    measured = wakeups.wakes(sim.rec.timeline(engine.T_START, sim.end, prog.procs))
    assert measured.height > 20
    exact = 0
    for p, ready, end, stopped, _g, _kind in measured.iter_rows():
        # The thread last woken for P before the readying (a stop-the-world drops an earlier one).
        woke, runs = max((w, r) for q, w, r in starts if q == p and w <= ready <= r)
        if stopped:
            assert runs >= end  # cut by a stop-the-world: at least that long
        else:
            assert runs == end  # it ends where that thread ran, never later
        exact += woke == ready
    assert exact > measured.height / 2
    # The draws reached the timeline: wake-ups of each drawn length were measured whole.
    delays = set((measured["end"] - measured["ready"]).to_list())
    assert set(DRAWN) <= delays


def test_wake_up_samples_are_drawn_from_the_seed_alone(consts: Constants) -> None:
    prog = workload.load(EXAMPLE)

    def run(seed: int, costs: Costs) -> pl.DataFrame:
        sim = engine.Sim(prog, consts, policies.resolve([]), 4, seed, decisions=False, costs=costs)
        sim.run()
        return sim.rec.timeline(engine.T_START, sim.end, 4).spans

    sampled = Costs(wake_m_samples_ns=DRAWN)
    assert run(1, sampled).equals(run(1, sampled))
    assert not run(1, sampled).equals(run(1, Costs()))
    assert not run(1, sampled).equals(run(2, sampled))


def test_a_wake_up_for_a_yielded_g_is_measured_from_the_yield(consts: Constants) -> None:
    # goschedImpl ends in wakep: main's Gosched with P1 idle wakes a thread for P1, and the
    # trace's requeue flow is the readying it is measured from (the wake-up's whole length).
    from goblueprint.model import program as P

    prog = P.Program()
    prog.add_template("main.main", [(P.CPU, 1000, 0), (P.YIELD, 0, 0), (P.CPU, 100_000, 0)])
    prog.roots.append((0, 0))
    sim = engine.Sim(prog, consts, policies.resolve([]), 2, seed=1)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, 2)
    w = wakeups.wakes(tl).filter(pl.col("p") == 1)  # (P0's: main's own start)
    assert (w["end"] - w["ready"]).to_list() == [sim.k.wake_m_ns]


def _yield_loop(consts: Constants, samples: tuple[int, ...]) -> tuple[int, list[int]]:
    """A G that yields in a loop on 4 Ps, with the trace's measured wake-ups SAMPLES:
    (its migrations, the model's thread wake-ups as its timeline measures them)."""
    from goblueprint.model import program as P

    prog = P.Program()
    prog.add_template("main.main", [(P.CPU, 64, 0), (P.YIELD, 0, 0)] * 20_000)
    prog.roots.append((0, 0))
    prog.procs = 4
    prog.wake_samples_ns = samples
    sim = engine.Sim(prog, consts, policies.resolve([]), 4, seed=1, decisions=False)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, 4)
    w = wakeups.wakes(tl)
    return int(tl.flows["migrated"].sum()), (w["end"] - w["ready"]).to_list()


def test_a_replay_draws_its_other_wake_ups_from_the_trace_s_once_it_measured_enough(
    consts: Constants,
) -> None:
    # Each Gosched ends in wakep. At the constant 8 us every woken spinner finds the G on the
    # global queue, takes it and, the last spinner to find work, wakes the next: a chain of
    # migrations. The traced machine's threads took far longer (docs/model.md, "A goroutine
    # that yields in a loop"); drawn from its measured wake-ups, the chain stops.
    constant_migrations, constant_wakes = _yield_loop(consts, ())
    assert constant_migrations > 100 and set(constant_wakes) >= {Costs().wake_m_ns}
    n = engine.MIN_DRAWN_WAKEUPS
    drawn_migrations, drawn_wakes = _yield_loop(consts, (1_000_000,) * n)
    assert drawn_migrations < constant_migrations / 10
    assert drawn_wakes and min(drawn_wakes) >= 1_000_000  # none at the constant
    # Fewer samples than that stand for no machine: the constant, as with none.
    assert _yield_loop(consts, (1_000_000,) * (n - 1)) == (constant_migrations, constant_wakes)
