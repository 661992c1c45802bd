"""Invariants on long random runs: no G in two places, queue bounds, goroutines conserved."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goblueprint.model import policies
from goblueprint.model.constants import Constants
from goblueprint.model.engine import GS_DEAD, Sim
from goblueprint.model.workload import compile_workload

_op = st.one_of(
    st.builds(lambda n: {"cpu_us": n}, st.integers(1, 20_000)),
    st.builds(lambda n: {"sleep_us": n}, st.integers(1, 2000)),
    st.builds(lambda n: {"syscall_us": n}, st.integers(1, 3000)),
    st.builds(lambda n: {"net_us": n}, st.integers(1, 3000)),
    st.just({"lock": "mu"}),  # paired with unlock below so no G waits forever on it
)


def _body(ops: list[dict]) -> list[dict]:
    out: list[dict] = []
    for op in ops:
        out += [op, {"cpu_us": 1}, {"unlock": "mu"}] if "lock" in op else [op]
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    procs=st.integers(1, 6),
    seed=st.integers(0, 2**31),
    spawn=st.integers(1, 300),
    body=st.lists(_op, min_size=1, max_size=8),
    pol=st.sampled_from(sorted(policies.REGISTRY)),
    small_queue=st.booleans(),
    cpus=st.integers(0, 4),  # the machine's CPUs (0: one per thread): woken Ms wait for one
)
def test_random_runs_keep_invariants(
    consts: Constants,
    procs: int,
    seed: int,
    spawn: int,
    body: list[dict],
    pol: str,
    small_queue: bool,
    cpus: int,
) -> None:
    data = {
        "channels": {"c": 1},
        "mutexes": ["mu"],
        "gc": {"every_ms": 3, "stw_us": 50, "until_ms": 30},
        "goroutine": {
            "main": {"ops": [{"spawn": "w", "count": spawn}, {"spawn": "pair"},
                             {"repeat": 20, "ops": [{"send": "c"}, {"cpu_us": 30}]}]},
            "w": {"ops": _body(body)},
            "pair": {"ops": [{"repeat": 20, "ops": [{"recv": "c"}, {"cpu_us": 10}]}]},
        },
    }  # fmt: skip
    c = replace(consts, runq_size=8) if small_queue else consts  # overflows happen with few Gs
    sim = Sim(compile_workload(data), c, policies.resolve([pol]), procs, seed, decisions=False, cpus=cpus)
    sim.run(check_every=7)
    sim.check_invariants()
    # Every goroutine ran to its end: none lost in a queue, none left blocked.
    assert sim.live == 0 and all(s == GS_DEAD for s in sim.gstatus[1:])
    assert sim.created == 1 + spawn + 1
