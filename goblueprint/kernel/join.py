"""Kernel intervals joined to a Go trace: one clock, one thread id, one data model.

The clock: Go's trace clock on Linux is ``nanotime()`` (CLOCK_MONOTONIC) divided
by 64 on amd64 (``traceClockNow``), the reader multiplies it back, and
``perf record -k mono`` stamps CLOCK_MONOTONIC: the same clock, up to the
trace's 64 ns tick.  Go 1.25+ traces write a clock snapshot in every
generation's sync batch (trace time and monotonic ns read together); the
median of ``mono - trace`` is the offset applied to the kernel's times, and
the snapshots' spread is reported.  Older traces have none: the offset is 0.

The thread: a trace's M ids are the threads' ids (``gettid``), so a kernel
interval of thread T lies under M lane T.  Intervals are cut where the M's
trace state changes (``pieces``), and every figure and mark comes from those
pieces, by column operations.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.errors import UsageError
from goblueprint.kernel import record
from goblueprint.kernel.decode import threads
from goblueprint.kernel.intervals import KSTATE_NAMES, OFF_CPU, RUNNABLE, KState, intervals
from goblueprint.timeline.model import NONE, LaneKind, State, Timeline

# Kernel state -> the timeline's State code for KERNEL lanes.
KSTATE_TO_STATE = {
    KState.ON_CPU: State.K_ON_CPU,
    KState.PREEMPTED: State.K_PREEMPTED,
    KState.WOKEN: State.K_WOKEN,
    KState.SLEEPING: State.K_SLEEPING,
    KState.DISK: State.K_DISK,
    KState.OTHER: State.K_OFF_CPU,
}


@dataclass
class KernelData:
    """A capture's kernel recording, decoded (kernel.json + kernel_events.parquet)."""

    directory: Path
    meta: dict[str, Any]
    pid: int
    events: pl.DataFrame
    tids: pl.Series


def load(directory: str | Path) -> KernelData:
    d = Path(directory)
    meta_path = d / record.META
    try:
        meta = json.loads(meta_path.read_text())
    except FileNotFoundError:
        raise UsageError(f"{d} has no {record.META}: capture with --kernel") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {meta_path}: {exc}") from None
    if meta.get("error") or not meta.get("files", {}).get("events"):
        raise UsageError(f"{d}: no kernel events were recorded ({meta.get('error') or 'no events file'})")
    try:
        events = pl.read_parquet(d / meta["files"]["events"])
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise UsageError(f"cannot read {d / meta['files']['events']}: {exc}") from None
    pid = int(meta["pid"])
    return KernelData(d, meta, pid, events, threads(events, pid))


@dataclass
class Clock:
    offset_ns: int  # subtracted from kernel (CLOCK_MONOTONIC) times to get trace times
    snapshots: int  # clock snapshots in the trace (Go 1.25+: one per generation)
    spread_ns: int  # max - min of the snapshots' mono - trace
    residuals: list[int] = field(default_factory=list)

    @property
    def source(self) -> str:
        if self.snapshots:
            return f"median of {self.snapshots} clock snapshots (mono - trace time)"
        return "no clock snapshot in the trace (before Go 1.25): both are CLOCK_MONOTONIC, offset 0"

    def as_dict(self) -> dict[str, Any]:
        return {"offset_ns": self.offset_ns, "snapshots": self.snapshots, "spread_ns": self.spread_ns,
                "source": self.source}  # fmt: skip


def trace_clock(trace: str | Path) -> Clock:
    """The trace's clock snapshots (mono - trace time per generation) and their median."""
    from goblueprint.trace.events import EV_SYNC_EVENT
    from goblueprint.trace.reader import open_trace
    from goblueprint.trace.wire import mul

    residuals = []
    with open_trace(trace) as reader:
        for chunk in reader.chunks():
            t = chunk.table
            if len(chunk) == 1 and chunk.typ[0] == EV_SYNC_EVENT and t is not None and t.has_clock_snapshot:
                residuals.append(int(t.snap_mono) - mul(t.freq, t.snap_time))
    if not residuals:
        return Clock(0, 0, 0)
    return Clock(
        round(statistics.median(residuals)), len(residuals), max(residuals) - min(residuals), residuals
    )


def _overlap(a_lane: np.ndarray, a_start: np.ndarray, a_end: np.ndarray,
             b_lane: np.ndarray, b_start: np.ndarray, b_end: np.ndarray) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Intersections of two interval sets, lane by lane: (a row, b row, start, end).

    Both sorted by (lane, start); B's intervals do not overlap within a lane (the
    trace's M spans tile the lane), so B's ends are sorted too and each A interval
    meets one contiguous run of B, found by two binary searches.
    """
    out_a, out_b = [], []
    for lane in np.intersect1d(unique(a_lane), unique(b_lane), assume_unique=True).tolist():
        ai = np.flatnonzero(a_lane == lane)
        bi = np.flatnonzero(b_lane == lane)
        lo = np.searchsorted(b_end[bi], a_start[ai], side="right")
        hi = np.searchsorted(b_start[bi], a_end[ai], side="left")
        count = np.maximum(hi - lo, 0)
        rep = np.repeat(ai, count)
        # For each repeated A row, its B rows lo, lo+1, ...: a running index within each run.
        within = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        out_a.append(rep)
        out_b.append(bi[np.repeat(lo, count) + within])
    ia = np.concatenate(out_a) if out_a else np.zeros(0, np.int64)
    ib = np.concatenate(out_b) if out_b else np.zeros(0, np.int64)
    start = np.maximum(a_start[ia], b_start[ib])
    end = np.minimum(a_end[ia], b_end[ib])
    keep = end > start
    return ia[keep], ib[keep], start[keep], end[keep]


def lookup(lanes: np.ndarray, times: np.ndarray, spans: pl.DataFrame, *, contain: bool = True) -> np.ndarray:
    """For each (lane, time), the row of SPANS (lane_id/start/end, sorted, disjoint) containing it; -1 if none.

    With ``contain=False``, the last span of the lane that starts at or before the time.
    """
    out = np.full(len(times), -1, dtype=np.int64)
    s_lane = spans["lane_id"].to_numpy()
    s_start = spans["start"].to_numpy()
    s_end = spans["end"].to_numpy()
    for lane in np.intersect1d(unique(lanes), unique(s_lane), assume_unique=True).tolist():
        qi = np.flatnonzero(lanes == lane)
        si = np.flatnonzero(s_lane == lane)
        k = np.searchsorted(s_start[si], times[qi], side="right") - 1
        ok = k >= 0
        if contain:
            ok[ok] &= times[qi][ok] < s_end[si][k[ok]]
        out[qi[ok]] = si[k[ok]]
    return out


def take(values: np.ndarray, rows: np.ndarray, default: int) -> np.ndarray:
    """values[rows], DEFAULT where a row is -1 (``lookup``'s "none"); VALUES may be empty."""
    out = np.full(len(rows), default, dtype=np.int64)
    ok = rows >= 0
    out[ok] = values[rows[ok]]
    return out


@dataclass
class Joined:
    """Kernel intervals on the trace's clock, and their pieces under the trace's M lanes."""

    clock: Clock
    kernel: KernelData
    intervals: pl.DataFrame  # intervals.INTERVALS_SCHEMA, times in trace ns, + g (trace G at start)
    pieces: pl.DataFrame  # interval ∩ M span: tid, start, end, kstate, cpu, reason, interval, mstate, g, p
    m_spans: pl.DataFrame  # the trace's M spans (lane_id = thread)
    trace_threads: int  # M lanes in the trace
    matched_threads: int  # of those, threads the kernel recording saw


def m_spans(tl: Timeline) -> pl.DataFrame:
    return tl.spans.filter((pl.col("lane_kind") == LaneKind.M) & (pl.col("end") > pl.col("start"))).sort(
        ["lane_id", "start"]
    )


def join(tl: Timeline, kernel: KernelData, clock: Clock) -> Joined:
    iv = intervals(kernel.events, kernel.tids).with_columns(
        pl.col("start") - clock.offset_ns, pl.col("end") - clock.offset_ns
    )
    ms = m_spans(tl)
    ia, ib, start, end = _overlap(
        iv["tid"].to_numpy(), iv["start"].to_numpy(), iv["end"].to_numpy(),
        ms["lane_id"].to_numpy(), ms["start"].to_numpy(), ms["end"].to_numpy(),
    )  # fmt: skip
    pieces = pl.DataFrame(
        {
            "tid": iv["tid"].to_numpy()[ia],
            "start": start,
            "end": end,
            "kstate": iv["state"].to_numpy()[ia],
            "cpu": iv["cpu"].to_numpy()[ia],
            "reason": iv["reason"].gather(ia),
            "interval": ia,
            "interval_start": iv["start"].to_numpy()[ia],
            "mstate": ms["state"].to_numpy()[ib],
            "g": ms["g"].to_numpy()[ib],
            "p": ms["p"].to_numpy()[ib],
        }
    )
    at_start = lookup(iv["tid"].to_numpy(), iv["start"].to_numpy(), ms)
    g_at_start = take(ms["g"].to_numpy(), at_start, NONE)
    iv = iv.with_columns(pl.Series("g", g_at_start, dtype=pl.Int64))
    trace_ms = ms["lane_id"].unique()
    matched = int(trace_ms.is_in(kernel.tids.implode()).sum())
    return Joined(clock, kernel, iv, pieces, ms, trace_ms.len(), matched)


def under_running_g(pieces: pl.DataFrame) -> pl.Expr:
    return (pl.col("mstate") == State.M_RUNNING) & (pl.col("g") >= 0)


def preemption_marks(joined: Joined) -> pl.DataFrame:
    """The pieces where Go and the kernel disagree, as (tid, start, end, state, g, p, kstate, reason).

    OS_PREEMPTED_UNDER_G: the trace says the M runs a G, the kernel has it off its CPU.
    CPU_WAIT_WITH_P: the M holds a P without running a G and waits for a CPU (the
    P's run queue cannot be served by anyone else meanwhile).
    """
    pc = joined.pieces
    off = pl.col("kstate").is_in([int(s) for s in OFF_CPU])
    runnable = pl.col("kstate").is_in([int(s) for s in RUNNABLE])
    a = pc.filter(off & under_running_g(pc)).with_columns(
        pl.lit(State.OS_PREEMPTED_UNDER_G, pl.UInt8).alias("state")
    )
    b = pc.filter(runnable & (pl.col("p") >= 0) & ~under_running_g(pc)).with_columns(
        pl.lit(State.CPU_WAIT_WITH_P, pl.UInt8).alias("state")
    )
    return pl.concat([a, b]).sort(["tid", "start"])


def _labels(texts: pl.Series, strings: list[str]) -> np.ndarray:
    """String ids for TEXTS, appending new ones to STRINGS (a handful of distinct texts)."""
    index = {s: i for i, s in enumerate(strings)}
    uniq = texts.unique(maintain_order=True).to_list()
    for t in uniq:
        if t not in index:
            index[t] = len(strings)
            strings.append(t)
    table = pl.DataFrame(
        {"t": uniq, "id": [index[t] for t in uniq]}, schema={"t": pl.String, "id": pl.UInt32}
    )
    return texts.to_frame("t").join(table, on="t", how="left", maintain_order="left")["id"].to_numpy()


def _state_text(state: pl.Expr) -> pl.Expr:
    return state.replace_strict({int(k): v for k, v in KSTATE_NAMES.items()}, return_dtype=pl.String)


def with_kernel(tl: Timeline, joined: Joined) -> Timeline:
    """A copy of TL with the KERNEL, KMARK and CPU lanes added (model.py describes them)."""
    strings = list(tl.strings)
    iv = joined.intervals
    on_cpu = pl.col("state") == KState.ON_CPU
    text = (
        pl.when(on_cpu)
        .then(pl.format("CPU {}", pl.col("cpu")))
        .when(pl.col("reason") != "")
        .then(pl.format("{} [{}] on CPU {}", _state_text(pl.col("state")), pl.col("reason"), pl.col("cpu")))
        .otherwise(pl.format("{} (CPU {})", _state_text(pl.col("state")), pl.col("cpu")))
    )
    kern = iv.with_columns(text.alias("text"))
    to_state = np.zeros(256, np.uint8)
    for k, s in KSTATE_TO_STATE.items():
        to_state[int(k)] = int(s)
    kernel_spans = pl.DataFrame(
        {
            "lane_kind": np.full(kern.height, int(LaneKind.KERNEL), np.uint8),
            "lane_id": kern["tid"].to_numpy(),
            "start": kern["start"].to_numpy(),
            "end": kern["end"].to_numpy(),
            "state": to_state[kern["state"].to_numpy()],
            "g": kern["g"].to_numpy(),
            "p": kern["cpu"].to_numpy().astype(np.int64),
            "m": kern["tid"].to_numpy(),
            "label": _labels(kern["text"], strings),
            "stack": np.zeros(kern.height, np.uint32),
        }
    )
    cpu = kern.filter(on_cpu)
    cpu_spans = pl.DataFrame(
        {
            "lane_kind": np.full(cpu.height, int(LaneKind.CPU), np.uint8),
            "lane_id": cpu["cpu"].to_numpy().astype(np.int64),
            "start": cpu["start"].to_numpy(),
            "end": cpu["end"].to_numpy(),
            "state": np.full(cpu.height, int(State.K_ON_CPU), np.uint8),
            "g": cpu["g"].to_numpy(),
            "p": cpu["cpu"].to_numpy().astype(np.int64),
            "m": cpu["tid"].to_numpy(),
            "label": _labels(cpu.select(pl.format("thread {}", pl.col("tid")))["tid"], strings),
            "stack": np.zeros(cpu.height, np.uint32),
        }
    )
    marks = preemption_marks(joined)
    mark_text = pl.format("{}: {}", pl.lit("kernel"), _state_text(pl.col("kstate")))
    mark_spans = pl.DataFrame(
        {
            "lane_kind": np.full(marks.height, int(LaneKind.KMARK), np.uint8),
            "lane_id": marks["tid"].to_numpy(),
            "start": marks["start"].to_numpy(),
            "end": marks["end"].to_numpy(),
            "state": marks["state"].to_numpy(),
            "g": marks["g"].to_numpy(),
            "p": marks["p"].to_numpy(),
            "m": marks["tid"].to_numpy(),
            "label": _labels(marks.select(mark_text.alias("t"))["t"], strings),
            "stack": np.zeros(marks.height, np.uint32),
        }
    )
    # Clipped to the trace: perf starts before the program and stops after it, and every
    # view measures from the trace's start.
    added = (
        pl.concat([kernel_spans, cpu_spans, mark_spans])
        .filter((pl.col("end") > tl.start_ns) & (pl.col("start") < tl.end_ns))
        .with_columns(
            pl.col("start").clip(tl.start_ns, tl.end_ns), pl.col("end").clip(tl.start_ns, tl.end_ns)
        )
        .cast(tl.spans.schema)
    )
    spans = pl.concat([tl.spans, added]).sort(["lane_kind", "lane_id", "start"], maintain_order=True)
    lane_rows = added.select("lane_kind", "lane_id").unique().sort(["lane_kind", "lane_id"])
    prefix = {
        LaneKind.KERNEL: "kernel: thread ",
        LaneKind.KMARK: "Go vs kernel: thread ",
        LaneKind.CPU: "CPU ",
    }
    labels = [f"{prefix[LaneKind(k)]}{i}" for k, i in lane_rows.iter_rows()]
    lanes = pl.concat(
        [
            tl.lanes,
            lane_rows.with_columns(
                pl.Series("label", labels, dtype=pl.String),
                pl.lit("").alias("group"),
                pl.lit(False).alias("system"),
            ).cast(tl.lanes.schema),
        ]
    )
    return Timeline(
        start_ns=tl.start_ns, end_ns=tl.end_ns, strings=strings, spans=spans, flows=tl.flows,
        counters=tl.counters, instants=tl.instants, lanes=lanes, stack_frames=tl.stack_frames,
        go_version=tl.go_version,
    )  # fmt: skip


def kernel_timeline(tl: Timeline, trace: str | Path, directory: str | Path) -> tuple[Timeline, Joined]:
    """TL with the kernel lanes of the capture in DIRECTORY (the --kernel DIR of the trace commands)."""
    joined = join(tl, load(directory), trace_clock(trace))
    return with_kernel(tl, joined), joined
