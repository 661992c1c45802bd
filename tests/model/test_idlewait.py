"""Idle Ps while Gs wait, split by the thread wake-up under way, checked on the model's own timeline.

There the truth is known: the model wakes every thread for readied work after the delay
it is given. With every such wake-up 2 ms long, the idle-while-waiting time in measured
wake-ups must fall mostly in the ">= 1 ms" part; with the constant 8 µs, none of it may
(a measured wake-up is never longer than the model's).
"""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from goblueprint.model import engine, idlewait, measure, policies, replay
from goblueprint.model.constants import Constants, Costs
from goblueprint.timeline.analysis import analyse

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).resolve().parent.parent / "timeline" / "golden_builder"


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> replay.Program:
    trace = tmp_path_factory.mktemp("idlewait") / "sched.trace"
    trace.write_bytes(lzma.decompress((GOLDEN / "sched-go1.27.trace.xz").read_bytes()))
    return replay.from_timeline(analyse(str(trace)).timeline)


def _split(prog: replay.Program, consts: Constants, costs: Costs | None) -> tuple[dict[str, int], int]:
    sim = engine.Sim(prog, consts, policies.resolve([]), prog.procs, 1, decisions=False, costs=costs)
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, prog.procs)
    return idlewait.by_wake(tl), measure.idle_p_while_runnable(tl)


def test_idle_wait_in_long_wake_ups_is_where_the_model_woke_threads_late(
    program: replay.Program, consts: Constants
) -> None:
    long_, total = _split(program, consts, Costs(wake_m_samples_ns=(2_000_000,)))
    assert sum(long_.values()) == total  # a partition of idle_p_while_runnable
    # Mostly in the long part: a wake-up a stop cuts, or one measured from a later readying,
    # reads shorter (wakeups.py errs short), and timers and the network keep the constant.
    # (Time no measured wake-up covers is "none": wakeups.py takes one at a time and skips
    # wake-ups no readying began — startTheWorld's, handoffp's, and the one for the roots at
    # the start, which have no creation flow, as in a trace: 2 ms of this seed's 8.9, so 4×
    # where it was 5×. And 3× since the timer groups, 2026-12-08: this seed now takes the path
    # seed 2 took before them, 5.9 ms against 1.7, 3.4×; seed 3 gives 4.5× either way.)
    ge, mid, lt = (long_[k] for k in idlewait.KEYS[:3])
    assert ge > 1_000_000 and ge > 3 * (mid + lt)
    short, total = _split(program, consts, Costs())  # the constant (not the trace's own wake-ups)
    assert sum(short.values()) == total
    assert short["idle_wait_in_wakeups_lt_30us_ns"] > 0
    assert short["idle_wait_in_wakeups_ge_1ms_ns"] == short["idle_wait_in_wakeups_30us_1ms_ns"] == 0
