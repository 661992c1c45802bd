"""One call to simulate a Program: the run, its Timeline, decisions and schedtrace lines."""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import polars as pl

from goblueprint.errors import UsageError
from goblueprint.model import engine
from goblueprint.model.constants import Constants, Costs
from goblueprint.model.policies import Policy
from goblueprint.model.program import Program
from goblueprint.timeline.model import Timeline


@dataclass
class Result:
    sim: engine.Sim
    timeline: Timeline
    decisions: pl.DataFrame
    schedtrace: list[str]
    procs: int


def simulate(prog: Program, consts: Constants, policy: Policy, *, procs: int = 0, seed: int = 1,
             decisions: bool = True, schedtrace_ms: int = 0, costs: Costs | None = None,
             cpus: int | None = None) -> Result:  # fmt: skip
    n = procs or prog.procs or 1
    if n < 1 or n > 4096:
        raise UsageError(f"--procs {n}: expected 1..4096")
    if cpus is not None and (cpus < 0 or cpus > 4096):
        raise UsageError(f"--cpus {cpus}: expected 0..4096 (0: a CPU for every thread)")
    sim = engine.Sim(
        prog,
        consts,
        policy,
        n,
        seed,
        costs=costs,
        decisions=decisions,
        schedtrace_ms=schedtrace_ms,
        cpus=cpus,
    )
    sim.run()
    tl = sim.rec.timeline(engine.T_START, sim.end, n)
    sim.rec.spans = array("q")  # now in tl: a replay's are a GB or more
    return Result(sim, tl, sim.rec.decisions(), sim.schedtrace, n)
