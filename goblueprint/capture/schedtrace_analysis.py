"""Time series and hints from parsed schedtrace samples.

Input is a :class:`~goblueprint.capture.schedtrace.Schedtrace`; output is
polars tables and plain hint records.  Renderers (plots, text) live elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from goblueprint.capture.schedtrace import DETAIL_COUNTERS, SCHED_COUNTERS, Sample, Schedtrace

if TYPE_CHECKING:
    import polars as pl

# A condition must hold over this many consecutive samples to be a hint: one
# sample is a snapshot, a stretch is behaviour.
MIN_STRETCH = 3
P_RUNNING = 1  # _Prunning in runtime2.go


@dataclass(frozen=True)
class Hint:
    kind: str  # "runq-with-idle-procs", "spinning", "stuck-p"
    start_ms: int
    end_ms: int
    samples: int
    message: str

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "start_ms": self.start_ms,
            "end_ms": self.end_ms,
            "samples": self.samples,
            "message": self.message,
        }


def samples_frame(trace: Schedtrace) -> pl.DataFrame:
    """One row per SCHED line: the counters, and the sum of the per-P queues."""
    import polars as pl

    cols: dict[str, list[int | None]] = {"t_ms": []}
    for key in SCHED_COUNTERS + DETAIL_COUNTERS:
        cols[key] = []
    cols["local_runq_total"] = []
    for s in trace.samples:
        cols["t_ms"].append(s.t_ms)
        for key in SCHED_COUNTERS + DETAIL_COUNTERS:
            cols[key].append(s.counters.get(key))
        queues = per_p_runq(s)
        cols["local_runq_total"].append(sum(queues) if queues is not None else None)
    return pl.DataFrame(cols, schema={k: pl.Int64 for k in cols})


def per_p_runq(s: Sample) -> list[int] | None:
    if s.local_runq is not None:
        return s.local_runq
    if s.procs is not None:
        return [p["runqsize"] for p in s.procs]
    return None


def per_p_schedtick(s: Sample) -> list[int] | None:
    if s.schedticks is not None:
        return s.schedticks
    if s.procs is not None:
        return [p["schedtick"] for p in s.procs]
    return None


def procs_frame(trace: Schedtrace) -> pl.DataFrame:
    """One row per (sample, P): run-queue length, schedtick and status when printed."""
    import polars as pl

    rows: dict[str, list[int | None]] = {"t_ms": [], "p": [], "runqsize": [], "schedtick": [], "status": []}
    for s in trace.samples:
        queues = per_p_runq(s) or []
        ticks = per_p_schedtick(s) or []
        statuses = [p["status"] for p in s.procs] if s.procs is not None else []
        for p in range(max(len(queues), len(ticks))):
            rows["t_ms"].append(s.t_ms)
            rows["p"].append(p)
            rows["runqsize"].append(queues[p] if p < len(queues) else None)
            rows["schedtick"].append(ticks[p] if p < len(ticks) else None)
            rows["status"].append(statuses[p] if p < len(statuses) else None)
    return pl.DataFrame(rows, schema={k: pl.Int64 for k in rows})


def _stretches(flags: list[bool]) -> list[tuple[int, int]]:
    """Index ranges [start, end] of runs of True at least MIN_STRETCH long."""
    out = []
    start = None
    for i, flag in enumerate([*flags, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            if i - start >= MIN_STRETCH:
                out.append((start, i - 1))
            start = None
    return out


def hints(trace: Schedtrace) -> list[Hint]:
    samples = trace.samples
    found: list[Hint] = []

    # Work waits in the global queue while Ps have nothing to do: the wake-up
    # path (wakep/spinning Ms) is not keeping up.
    flags = [
        (s.counters.get("runqueue") or 0) > 0 and (s.counters.get("idleprocs") or 0) > 0 for s in samples
    ]
    for a, b in _stretches(flags):
        peak = max(samples[i].counters.get("runqueue") or 0 for i in range(a, b + 1))
        found.append(
            Hint(
                "runq-with-idle-procs",
                samples[a].t_ms,
                samples[b].t_ms,
                b - a + 1,
                f"global run queue non-empty (peak {peak}) while Ps were idle, "
                f"{samples[a].t_ms}–{samples[b].t_ms} ms",
            )
        )

    # Ms spinning sample after sample burn CPU looking for work they do not find.
    flags = [(s.counters.get("spinningthreads") or 0) > 0 for s in samples]
    for a, b in _stretches(flags):
        peak = max(samples[i].counters.get("spinningthreads") or 0 for i in range(a, b + 1))
        found.append(
            Hint(
                "spinning",
                samples[a].t_ms,
                samples[b].t_ms,
                b - a + 1,
                f"spinning threads (up to {peak}) in {b - a + 1} consecutive samples, "
                f"{samples[a].t_ms}–{samples[b].t_ms} ms",
            )
        )

    # A P that does not schedule although it is busy: one goroutine holds it
    # (a tight loop that async preemption did not reach, or a long syscall).
    nprocs = max((len(per_p_schedtick(s) or []) for s in samples), default=0)
    for p in range(nprocs):
        flags = []
        for i, s in enumerate(samples):
            ticks = per_p_schedtick(s)
            prev = per_p_schedtick(samples[i - 1]) if i else None
            if ticks is None or prev is None or p >= len(ticks) or p >= len(prev):
                flags.append(False)
                continue
            busy = (s.counters.get("idleprocs") == 0) or (
                s.procs is not None and p < len(s.procs) and s.procs[p]["status"] == P_RUNNING
            )
            queues = per_p_runq(s)
            queued = queues is not None and p < len(queues) and queues[p] > 0
            flags.append(ticks[p] == prev[p] and (busy or queued))
        for a, b in _stretches(flags):
            found.append(
                Hint(
                    "stuck-p",
                    samples[a].t_ms,
                    samples[b].t_ms,
                    b - a + 1,
                    f"P{p} schedtick did not advance while busy, {samples[a].t_ms}–{samples[b].t_ms} ms",
                )
            )
    found.sort(key=lambda h: (h.start_ms, h.kind, h.message))
    return found


def summary(trace: Schedtrace) -> dict[str, object]:
    """A few numbers over the whole log, for the capture summary."""
    samples = trace.samples
    if not samples:
        return {"samples": 0}

    def series(key: str) -> list[int]:
        return [v for s in samples if (v := s.counters.get(key)) is not None]

    runq = series("runqueue")
    idle = series("idleprocs")
    gmp = series("gomaxprocs")
    out: dict[str, object] = {
        "samples": len(samples),
        "span_ms": samples[-1].t_ms - samples[0].t_ms,
        "gomaxprocs_first": samples[0].counters.get("gomaxprocs"),
        "gomaxprocs_last": samples[-1].counters.get("gomaxprocs"),
        # In order, repeats collapsed: 2 → 1 → 2 for a program that lowers and restores it.
        "gomaxprocs_values": [v for i, v in enumerate(gmp) if i == 0 or gmp[i - 1] != v],
        "threads_max": max(series("threads"), default=None),
        "runqueue_max": max(runq, default=None),
        "runqueue_mean": round(sum(runq) / len(runq), 3) if runq else None,
        "idleprocs_mean": round(sum(idle) / len(idle), 3) if idle else None,
        "spinning_samples": sum(1 for v in series("spinningthreads") if v > 0),
    }
    return out
