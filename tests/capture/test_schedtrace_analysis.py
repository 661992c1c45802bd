"""Tables and hints computed from schedtrace samples."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from goblueprint.capture import schedtrace, schedtrace_analysis
from goblueprint.capture.schedtrace_analysis import MIN_STRETCH, hints

DATA = Path(__file__).resolve().parent / "data"


def _sample(t: int, **counters: int) -> schedtrace.Sample:
    base = {
        "gomaxprocs": 2,
        "idleprocs": 0,
        "threads": 4,
        "spinningthreads": 0,
        "idlethreads": 0,
        "runqueue": 0,
    }
    base.update(counters)
    return schedtrace.Sample(t_ms=t, counters=base, local_runq=[0, 0], schedticks=[t, t])


def _longest_run(flags: list[bool]) -> int:
    best = run = 0
    for flag in flags:
        run = run + 1 if flag else 0
        best = max(best, run)
    return best


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=30))
def test_runq_with_idle_procs_hint_iff_a_long_enough_stretch(values: list[tuple[int, int]]) -> None:
    trace = schedtrace.Schedtrace(
        [_sample(i * 10, runqueue=q, idleprocs=idle) for i, (q, idle) in enumerate(values)]
    )
    found = [h for h in hints(trace) if h.kind == "runq-with-idle-procs"]
    flags = [q > 0 and idle > 0 for q, idle in values]
    assert bool(found) == (_longest_run(flags) >= MIN_STRETCH)
    for h in found:
        covered = [flags[i] for i in range(len(values)) if h.start_ms <= i * 10 <= h.end_ms]
        assert all(covered) and len(covered) == h.samples >= MIN_STRETCH


@given(st.lists(st.integers(0, 2), min_size=1, max_size=30))
def test_spinning_hint_iff_a_long_enough_stretch(values: list[int]) -> None:
    trace = schedtrace.Schedtrace([_sample(i, spinningthreads=v) for i, v in enumerate(values)])
    found = [h for h in hints(trace) if h.kind == "spinning"]
    assert bool(found) == (_longest_run([v > 0 for v in values]) >= MIN_STRETCH)


@given(st.integers(0, 10), st.integers(0, 10))
def test_stuck_p_hint_when_schedtick_stops_while_busy(before: int, stuck: int) -> None:
    samples = []
    for i in range(before + stuck + 1):
        s = _sample(i * 10, idleprocs=0)
        # P1 advances every sample; P0 stops advancing after BEFORE samples.
        s.schedticks = [min(i, before), i]
        samples.append(s)
    found = [h for h in hints(schedtrace.Schedtrace(samples)) if h.kind == "stuck-p"]
    assert bool(found) == (stuck >= MIN_STRETCH)
    assert all("P0" in h.message for h in found)


def test_idle_p_with_a_still_schedtick_is_not_stuck() -> None:
    samples = [_sample(i, idleprocs=1) for i in range(10)]
    for s in samples:
        s.schedticks = [5, s.t_ms]
    assert not [h for h in hints(schedtrace.Schedtrace(samples)) if h.kind == "stuck-p"]


def test_frames_hold_the_parsed_values() -> None:
    for log in sorted(DATA.glob("*.log")):
        parsed = schedtrace.parse(log.read_text())
        frame = schedtrace_analysis.samples_frame(parsed)
        assert frame.height == len(parsed.samples)
        assert frame["runqueue"].to_list() == [s.counters["runqueue"] for s in parsed.samples]
        assert frame["t_ms"].to_list() == [s.t_ms for s in parsed.samples]
        procs = schedtrace_analysis.procs_frame(parsed)
        assert procs.height == sum(s.counters["gomaxprocs"] for s in parsed.samples)
        queues = [q for s in parsed.samples for q in schedtrace_analysis.per_p_runq(s)]
        assert procs["runqsize"].to_list() == queues
