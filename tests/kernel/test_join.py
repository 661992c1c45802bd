"""The join on a hand-made pair of perf records and trace spans with answers worked out by hand.

Process 50 has threads 100 (an M running G7 on P0 over [1000, 5000), then idle)
and 300 (an M holding P1 without a G: in the scheduler); process 999 competes.
Times are nanoseconds; perf prints them as seconds.nanoseconds.
"""

from __future__ import annotations

import polars as pl
import pytest

from goblueprint.errors import CaptureError
from goblueprint.kernel import decode, join, metrics
from goblueprint.kernel.intervals import KState, intervals
from goblueprint.timeline.model import LaneKind, State, Timeline, frame


def _t(ns: int) -> str:
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def _switch(ctx: str, cpu: int, ns: int, prev: int, state: str, nxt: int) -> str:
    # next_comm with a space: the payload parser must anchor on the fields after it.
    return (
        f" {ctx} [{cpu:03d}] {_t(ns)}: sched:sched_switch: prev_comm=x prev_pid={prev} prev_prio=120 "
        f"prev_state={state} ==> next_comm=a b next_pid={nxt} next_prio=120"
    )


LINES = [
    _switch("999/999", 1, 900, 999, "S", 100),
    _switch("50/100", 1, 2000, 100, "R+", 999),
    " 999/999 [000] 0.000002500: sched:sched_migrate_task: comm=prog pid=100 prio=120 orig_cpu=1 dest_cpu=0",
    _switch("999/999", 0, 3000, 999, "R", 100),
    " 50/100 [000] 0.000003500: syscalls:sys_enter_futex: uaddr: 0x00001000, op: 0x00000080, val: 0x00000000, "
    "utime: 0x00000000, uaddr2: 0x00000000, val3: 0x00000000",
    " 50/100 [000] 0.000003600:  syscalls:sys_exit_futex: 0xffffffffffffff92",
    _switch("50/100", 0, 4000, 100, "S", 0),
    " 50/200 [001] 0.000004200: sched:sched_wakeup: comm=prog pid=100 prio=120 target_cpu=000",
    " 999/999 [001] 0.000004300: sched:sched_wakeup: comm=prog pid=100 prio=120 target_cpu=000",
    _switch("0/0", 0, 4700, 0, "R", 100),
    _switch("999/999", 1, 5000, 999, "R", 998),
    _switch("50/100", 0, 6000, 100, "R", 999),
    _switch("999/999", 0, 6500, 999, "R", 100),
    _switch("50/100", 0, 7000, 100, "X", 999),
    _switch("999/999", 1, 1000, 999, "R", 300),
    _switch("50/300", 1, 1200, 300, "R", 999),
    _switch("999/999", 1, 1800, 999, "S", 300),
    " 50/300 [001] 0.000002000: raw_syscalls:sys_enter: NR 1 (1, 2, 3, 4, 5, 6)",  # not asked for: dropped
]


def _text(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _timeline() -> Timeline:
    rows = [
        # lane_kind, lane_id, start, end, state, g, p, m
        (LaneKind.M, 100, 1000, 5000, State.M_RUNNING, 7, 0, 100),
        (LaneKind.M, 100, 5000, 8000, State.M_IDLE, -1, -1, 100),
        (LaneKind.M, 300, 0, 10000, State.M_RUNNING, -1, 1, 300),
        (LaneKind.G, 7, 1000, 5000, State.G_RUNNING, 7, 0, 100),
    ]
    cols = {
        k: [r[i] for r in rows]
        for i, k in enumerate(("lane_kind", "lane_id", "start", "end", "state", "g", "p", "m"))
    }
    cols.update(label=[0] * len(rows), stack=[0] * len(rows))
    return Timeline(start_ns=0, end_ns=10000, spans=frame("spans", cols))


def _kernel() -> join.KernelData:
    events, lost = decode.parse_script(_text(LINES))
    assert lost == 0
    own = decode.program_events(events, 50)
    meta = {"events": ["sched:sched_switch", "syscalls:sys_enter_futex"], "lost_records": 0}
    return join.KernelData(None, meta, 50, own, decode.threads(events, 50))  # type: ignore[arg-type]


def test_decode_reads_each_payload_and_keeps_the_program_rows() -> None:
    events, _ = decode.parse_script(_text(LINES))
    assert events.height == len(LINES) - 1  # the raw_syscalls line is not an event we read
    sw = events.filter(pl.col("event") == decode.Event.SWITCH).row(1, named=True)
    assert (sw["time"], sw["cpu"], sw["pid"], sw["tid"]) == (2000, 1, 50, 100)
    assert (sw["prev_tid"], sw["prev_state"], sw["next_tid"]) == (100, "R+", 999)
    exit_ = events.filter(pl.col("event") == decode.Event.FUTEX_EXIT).row(0, named=True)
    assert exit_["arg"] == -110  # ETIMEDOUT, printed as 64-bit hex
    enter = events.filter(pl.col("event") == decode.Event.FUTEX_ENTER).row(0, named=True)
    assert (enter["addr"], enter["arg"]) == (0x1000, 0x80)
    assert decode.threads(events, 50).to_list() == [100, 200, 300]
    own = decode.program_events(events, 50)
    # 999 -> 998 at t=5000 concerns no thread of process 50.
    assert 5000 not in own["time"].to_list()


def test_a_payload_perf_prints_differently_is_an_error_naming_the_line() -> None:
    bad = [*LINES[:1], " 50/100 [001] 0.000002000: sched:sched_switch: prev_comm=x prev_pid=100 (new layout)"]
    with pytest.raises(CaptureError, match="line 2 not understood"):
        decode.parse_script(_text(bad))


def test_intervals_by_hand() -> None:
    k = _kernel()
    iv = intervals(k.events, k.tids).filter(pl.col("tid") == 100)
    got = list(zip(iv["start"], iv["end"], iv["state"], iv["cpu"], strict=True))
    assert got == [
        (900, 2000, KState.ON_CPU, 1),
        (2000, 3000, KState.PREEMPTED, 1),
        (3000, 4000, KState.ON_CPU, 0),
        (4000, 4200, KState.SLEEPING, 0),
        (4200, 4700, KState.WOKEN, 0),  # the second wake-up (4300) changes nothing
        (4700, 6000, KState.ON_CPU, 0),
        (6000, 6500, KState.PREEMPTED, 0),
        (6500, 7000, KState.ON_CPU, 0),  # then it exits: nothing after
    ]


def test_metrics_by_hand() -> None:
    tl = _timeline()
    joined = join.join(tl, _kernel(), join.Clock(0, 0, 0))
    d = metrics.compute(joined, tl)
    t100 = next(t for t in d["threads"] if t["m"] == 100)
    assert t100["involuntary_switches"] == 2  # R+ at 2000, R at 6000
    assert t100["voluntary_switches"] == 1  # S at 4000; the exit (X) is not a switch one returns from
    assert t100["cpu_migrations"] == 1
    assert t100["off_cpu_ns"] == 1000 + 200 + 500 + 500
    assert (t100["off_preempted_ns"], t100["off_woken_waiting_cpu_ns"], t100["off_sleeping_ns"]) == (
        1500,
        500,
        200,
    )
    assert t100["os_preemptions_under_running_g"] == 1  # 6000 is after G7 left the M
    assert t100["runnable_in_kernel_while_running_ns"] == 1000 + 500
    assert t100["off_cpu_while_running_ns"] == 1000 + 200 + 500
    assert d["os_preemptions_under_running_g"] == 1
    assert d["runnable_in_kernel_while_running_ns"] == 1500
    assert d["wait_for_cpu_with_p_ns"] == 600  # thread 300, P1 held, no G, runnable [1200, 1800)
    g7 = next(g for g in d["goroutines"] if g["g"] == 7)
    assert (g7["os_preemptions"], g7["runnable_in_kernel_while_running_ns"], g7["cpu_migrations"]) == (
        1,
        1500,
        1,
    )
    assert g7["on_cpu_while_running_ns"] == 1000 + 1000 + 300
    spot = d["locks"]["futex_hot_spots"]
    assert [(s["waits"], s["wait_ns"], s["goroutines"], s["m_state"]) for s in spot] == [
        (1, 100, [7], "M running")
    ]


def test_clock_offset_moves_the_kernel_onto_the_trace() -> None:
    # Kernel clock 500 ns behind the trace: every kernel time moves 500 ns later.
    tl = _timeline()
    d = metrics.compute(join.join(tl, _kernel(), join.Clock(-500, 1, 0)), tl)
    assert d["os_preemptions_under_running_g"] == 1  # 2500 is under G7, 6500 is not
    # preempted [2500, 3500), woken [4700, 5200) cut at 5000 where G7 leaves the M
    assert d["runnable_in_kernel_while_running_ns"] == 1000 + 300
    assert d["off_cpu_while_running_ns"] == 1000 + 200 + 300


def test_kernel_lanes_in_the_timeline() -> None:
    tl = _timeline()
    joined = join.join(tl, _kernel(), join.Clock(0, 0, 0))
    out = join.with_kernel(tl, joined)
    out.validate()
    marks = out.spans.filter(pl.col("lane_kind") == LaneKind.KMARK).sort("lane_id", "start")
    rows = list(zip(marks["lane_id"], marks["start"], marks["end"], marks["state"], marks["g"], strict=True))
    assert rows == [
        (100, 2000, 3000, State.OS_PREEMPTED_UNDER_G, 7),
        (100, 4000, 4200, State.OS_PREEMPTED_UNDER_G, 7),
        (100, 4200, 4700, State.OS_PREEMPTED_UNDER_G, 7),
        (300, 1200, 1800, State.CPU_WAIT_WITH_P, -1),
    ]
    cpu0 = out.spans.filter((pl.col("lane_kind") == LaneKind.CPU) & (pl.col("lane_id") == 0))
    assert list(zip(cpu0["start"], cpu0["m"], strict=True)) == [(3000, 100), (4700, 100), (6500, 100)]
    kern = out.spans.filter((pl.col("lane_kind") == LaneKind.KERNEL) & (pl.col("lane_id") == 100))
    assert (
        out.strings[kern.filter(pl.col("start") == 2000)["label"].item()]
        == "preempted (runnable) [R+] on CPU 1"
    )
    assert set(out.lanes.filter(pl.col("lane_kind") >= LaneKind.KERNEL)["label"]) >= {
        "kernel: thread 100",
        "Go vs kernel: thread 100",
        "CPU 0",
    }


def test_a_switch_perf_did_not_deliver_leaves_its_stretch_out() -> None:
    # Thread 400: in, out (S), woken, out (S) again with no switch-in between, then in.
    lines = [
        _switch("999/999", 1, 100, 999, "R", 400),
        _switch("50/400", 1, 200, 400, "S", 999),
        " 999/999 [001] 0.000000300: sched:sched_wakeup: comm=prog pid=400 prio=120 target_cpu=001",
        _switch("50/400", 1, 400, 400, "S", 999),
        _switch("999/999", 1, 600, 999, "R", 400),
        _switch("50/400", 1, 700, 400, "R", 999),
    ]
    events, _ = decode.parse_script(_text(lines))
    tids = decode.threads(events, 50)
    iv = intervals(decode.program_events(events, 50), tids)
    got = list(zip(iv["start"], iv["end"], iv["state"], strict=True))
    # [200, 300) and [300, 400) are unknown: the thread ran somewhere in them, unseen.
    assert got == [(100, 200, KState.ON_CPU), (400, 600, KState.SLEEPING), (600, 700, KState.ON_CPU)]
    from goblueprint.kernel.intervals import unpaired_switches

    assert unpaired_switches(events, tids) == 1


def test_perfetto_export_has_kernel_and_cpu_tracks(tmp_path) -> None:
    import perfetto_read

    from goblueprint.timeline.export_perfetto import write_perfetto

    tl = _timeline()
    out = tmp_path / "k.pftrace"
    write_perfetto(join.with_kernel(tl, join.join(tl, _kernel(), join.Clock(0, 0, 0))), out)
    names = {t.name for t in perfetto_read.read(out.read_bytes()).tracks.values()}
    assert {"kernel: thread 100", "Go vs kernel: thread 100", "CPU 0", "CPU 1", "CPU cores (kernel)"} <= names
