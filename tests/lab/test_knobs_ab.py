"""lab knobs (read from each release's source) and lab ab (baseline against changed runtime)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint.errors import LabError
from goblueprint.lab import ab, instrument, knobs
from goblueprint.source import facts

from .conftest import LAB_GOPROGS, RELEASES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("go", RELEASES)
def test_knobs_are_read_from_the_releases_source(go: str) -> None:
    root = facts.resolve(go=go)
    found = {k["name"]: k for k in knobs.read(root)}
    assert set(found) == set(knobs.BY_NAME)
    for k in found.values():
        assert k["missing"] is None and k["sites"], k
        for site in k["sites"]:
            line = (root.path / site["file"]).read_text().splitlines()[site["line"] - 1]
            assert site["text"] in line, (k["name"], site, line)
    assert found["global_queue_tick"]["value"] == "61"
    assert len(found["sysmon_min_sleep_us"]["sites"]) == 2  # sysmon sets its 20 µs in two places
    assert found["runnext_inherits_time"]["value"] == "true"


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("global_queue_tick=0", "knob global_queue_tick=0 is out of range [1, 1000000]"),
        ("forcePreemptNS=ten", "knob forcePreemptNS is an integer, not 'ten'"),
        ("runnext_inherits_time=1", "knob runnext_inherits_time is a bool: true or false, not '1'"),
        ("no_such_knob=3", "unknown knob 'no_such_knob'"),
        ("steal_tries", "--knob steal_tries: expected NAME=VALUE"),
    ],
)
def test_bad_knob_values_are_one_line_errors(setting: str, message: str) -> None:
    available = knobs.read(facts.resolve(go="1.27"))
    with pytest.raises(LabError) as info:
        knobs.parse_settings([setting], available)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_cli_rejects_a_knob_before_building(run_cli: Callable[..., tuple]) -> None:
    code, _out, err = run_cli("lab", "ab", "--knob", "global_queue_tick=0", "--", "go", "run", ".")
    assert code != 0
    assert err.strip().splitlines() == [
        "goblueprint: error: knob global_queue_tick=0 is out of range [1, 1000000]"
    ]


def test_knob_is_changed_at_each_of_its_sites() -> None:
    root = facts.resolve(go="1.27")
    ins = instrument.instrument(root, knobs={"sysmon_min_sleep_us": "7"})
    sites = ins.knobs["sysmon_min_sleep_us"]["sites"]
    assert len(sites) == 2
    text = (ins.directory / "src" / "runtime" / "proc.go").read_text().splitlines()
    original = (root.path / "src" / "runtime" / "proc.go").read_text().splitlines()
    assert len(text) == len(original)  # lines keep their numbers
    for _file, line, old in sites:
        assert old in original[line - 1]
        assert original[line - 1].replace(old, "(7)") == text[line - 1]


def test_ab_short_preemption_slice_preempts_more(tmp_path: Path) -> None:
    """More preemptions with a short forcePreemptNS, by construction rather than by luck.

    retake preempts a G only once it has held its P for forcePreemptNS, and only when
    sysmon wakes: under CPU load sysmon's sleep grows to 10 ms, so a shorter
    forcePreemptNS alone changes little. Side b also caps sysmon's sleep (100 µs), so
    each of b's time slices ends within forcePreemptNS (200 µs) plus a sysmon tick,
    while each of a's lasts at least 10 ms: on the same CPU work (cpubound: more
    goroutines than Ps, loops without calls) b makes many times a's preemptions. A
    loaded machine stretches both sides' slices by the same wall-clock delays, so the
    ordering holds; the interval excludes zero once every b run beats every a run.
    """
    force_b = 200_000
    result = ab.ab(
        ["."],
        tmp_path,
        {"forcePreemptNS": str(force_b), "sysmon_max_sleep_us": "100"},
        runs=3,
        cwd=LAB_GOPROGS / "cpubound",
    )
    json.dumps(result)  # plain data
    assert result["runs"] == 3
    assert set(ab.METRICS) <= set(result["metrics"])
    pre = result["metrics"]["preemptions"]
    assert pre["diff"] == pytest.approx(pre["b"] - pre["a"])
    assert pre["ci"][0] > 0, pre  # the interval excludes zero
    assert result["metrics"]["sysmon_wakeups"]["ci"][0] > 0
    # The knob reached the runtime: b preempts slices that a's runtime never could (a
    # preempts nothing that ran less than the release's forcePreemptNS), none below b's.
    force_a = next(
        c["value"] for c in facts.load(facts.resolve(go="1.27"))["consts"] if c["name"] == "forcePreemptNS"
    )
    ran = {side: _preempted_ran_ns(tmp_path / f"{side}0") for side in ("a", "b")}
    assert ran["a"] and min(ran["a"]) >= force_a
    assert ran["b"] and min(ran["b"]) >= force_b and sum(r < force_a for r in ran["b"]) > 10


def _preempted_ran_ns(out: Path) -> list[int]:
    from goblueprint.lab import frame, records
    from goblueprint.lab.sysmon import sysmon

    table, dump = records.load(out)
    actions = sysmon(frame.records_frame(table, dump))["actions"]
    return [a["ran_ns"] for a in actions if a["action"] == "preempt" and a["ran_ns"] is not None]


def test_bootstrap_interval_is_deterministic_and_brackets_the_difference() -> None:
    a, b = [10.0, 12.0, 11.0, 13.0], [20.0, 22.0, 19.0, 21.0]
    low, high = ab.bootstrap_ci(a, b)
    assert (low, high) == ab.bootstrap_ci(a, b)
    assert low <= 9.0 <= high and low > 0
    same_low, same_high = ab.bootstrap_ci(a, a)
    assert same_low <= 0 <= same_high
