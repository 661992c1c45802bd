"""simulate predict against the real runtime: `lab ab` on the same program, three knobs.

For each knob the lab runs the program on the released and the changed runtime; the
model replays the baseline run's trace with and without the knob.  Where the lab's
95% interval excludes zero, the model's change must have the same sign.  Its size must
lie in the lab's interval or, where it does not, be no further from the lab's mean
difference than that difference itself or the interval's width (the cases README.md
explains: the lab counts sysmon's preemption *requests*, the model the preemptions that
happen; a p99 of a few hundred wake-ups is one sample).  sysmon's wake-ups are compared
per second of wall time: the lab's wall time moves with the load of the machine (other
processes take its CPUs), which the model does not simulate, and sysmon wakes per unit
of time.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from goblueprint.lab import ab
from goblueprint.model import replay
from goblueprint.model.constants import Constants
from goblueprint.timeline.analysis import analyse

# Not fully stable: on a loaded machine the baseline run's trace changes from session to
# session; the model's p50 change for sysmon_max_sleep_us has come out with the wrong sign on
# some, and of seven sessions on 2026-12-04 one failed (the steal program's steals, now held
# only with a CPU per P, and forcePreemptNS's sysmon rate against a lab interval of
# [-41.6, -0.5] wake-ups/s; README.md). It also builds runtimes and runs the lab (30-100 s),
# so it runs only when asked for.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.environ.get("GOBLUEPRINT_LAB_PREDICT"), reason="set GOBLUEPRINT_LAB_PREDICT=1 (runs lab ab)"
    ),
]
LAB_GOPROGS = Path(__file__).resolve().parents[1] / "lab" / "goprogs"
# (program, knob, the metrics the knob acts on): those are held to the lab; the others are
# printed (README.md lists them) but a shared machine's noise in five runs a side makes
# the lab's own interval for them move from run to run (a p50 of the steal program's
# latency came out [-185 µs, 195 µs] in one session and [88 µs, 342 µs] in the next).
CASES = [
    ("cpubound", {"forcePreemptNS": "2000000"}, ("preemptions", "sched_latency_p50_ns")),
    (
        "cpubound",
        {"sysmon_max_sleep_us": "1000"},
        ("preemptions", "sched_latency_p50_ns", "sched_latency_p99_ns"),
    ),
    ("steal", {"steal_tries": "1"}, ("steals",)),
    ("steal2", {"steal_tries": "1"}, ("steals",)),
]
# The Ps each program sets (runtime.GOMAXPROCS in tests/lab/goprogs/*/main.go). The model gave
# every M a CPU of its own until it took the run's CPUs (Sim's cpus: a woken M waits while every
# CPU runs an M; on this session's 2026-12-04 07:26 runs that turned the steal program's steals
# from +3.4 to -6.1 against the lab's -69.2 [-106, -31], still not held: one session); with
# fewer CPUs than Ps the real threads take turns, and the steal
# program's steals then follow the machine: at 4 Ps on 2 shared CPUs the lab's mean change for
# steal_tries=1 was positive in 8 of 11 sessions and significant in three (+82, +142, -109),
# the model's -25 to +12; on a copy at 2 Ps the lab gave +16, -28, -68 (significant), the model
# +35, -4, -3 (README.md, "Predictions against the lab"; four more sessions there: +58
# [6, 125] significant, the model +7). So a metric is held only where the machine has a CPU
# per P; steal2 is that copy (tests/model/goprogs), held on 2 CPUs.
PROGRAM_PROCS = {"cpubound": 2, "steal": 4, "steal2": 2}
MODEL_GOPROGS = Path(__file__).resolve().parent / "goprogs"


@pytest.mark.parametrize(
    ("prog", "knob", "checked"), CASES, ids=[f"{next(iter(k))}-{p}" for p, k, _ in CASES]
)
def test_prediction_agrees_with_lab_ab(
    tmp_path: Path, consts: Constants, prog: str, knob: dict[str, str], checked: tuple[str, ...]
) -> None:
    from goblueprint.cli._simulate_predict import predict

    where = MODEL_GOPROGS if (MODEL_GOPROGS / prog).is_dir() else LAB_GOPROGS
    lab = ab.ab(["."], tmp_path, knob, runs=5, cwd=where / prog)
    from goblueprint.cli._simulate_common import machine_cpus

    trace = tmp_path / "a0" / "trace.out"
    program = replay.from_timeline(analyse(str(trace)).timeline)
    # The run's machine, from its meta.json, as `simulate predict` takes it.
    program.cpus = machine_cpus(trace)
    got = predict(program, consts, knob, seeds=10)
    for name, v in got["metrics"].items():  # shown when a check fails
        m = lab["metrics"][name]
        print(
            f"{next(iter(knob))} {name}: model {v['diff']:.4g} lab {m['diff']:.4g} [{m['ci'][0]:.4g}, {m['ci'][1]:.4g}]"
        )
    if (os.cpu_count() or 1) < PROGRAM_PROCS[prog]:
        print(f"{prog}: {PROGRAM_PROCS[prog]} Ps on {os.cpu_count()} CPUs: {', '.join(checked)} not held")
        checked = ()
    for name in checked:
        low, high = lab["metrics"][name]["ci"]
        diff = got["metrics"][name]["diff"]
        mean = lab["metrics"][name]["diff"]
        if low > 0 or high < 0:
            assert (diff > 0) == (high > 0), (name, diff, low, high)
        within = low <= diff <= high
        assert within or abs(diff - mean) <= max(abs(mean), high - low), (name, diff, mean, low, high)
    # sysmon wake-ups per second of wall time, each side's runs as rates.
    m = lab["metrics"]
    rate_a = [w / t for w, t in zip(m["sysmon_wakeups"]["a_runs"], m["wall_ns"]["a_runs"], strict=True)]
    rate_b = [w / t for w, t in zip(m["sysmon_wakeups"]["b_runs"], m["wall_ns"]["b_runs"], strict=True)]
    low, high = ab.bootstrap_ci(rate_a, rate_b)
    p = got["metrics"]
    pred = (
        p["sysmon_wakeups"]["predicted"] / p["wall_ns"]["predicted"]
        - p["sysmon_wakeups"]["base"] / p["wall_ns"]["base"]
    )
    if low > 0 or high < 0:
        assert (pred > 0) == (high > 0), (pred, low, high)
    # The rate's interval from five runs a side is narrow; allow the model half its width again.
    slack = (high - low) / 2
    assert low - slack <= pred <= high + slack, (pred, low, high)
