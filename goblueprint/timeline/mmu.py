"""Minimum mutator utilization (MMU), as Go's ``internal/trace/gc.go`` defines it.

``UtilCollector`` follows ``MutatorUtilizationV2`` event by event: the mutator
utilization function is a step function of time (the share of Ps not doing GC
work: stop-the-world, background mark workers, mark assists, sweeping, as the
flags select), one function for the whole program or one per P.  It is ported
statement by statement, quirks included (a RangeActive in the first generation
subtracts 1/GOMAXPROCS back to the trace start; a GoStatus refreshes states),
because the point is Go's numbers.

``MMUCurve.mmu`` is the minimum, over every window of the given length, of the
mean utilization in that window: Go's MMUCurve (1000 summary bands per function,
refined from the lowest bound up, skipping starts that cannot go lower), ported
step for step too.  Where the windowed mean is flat its float rounding differs
from one start to the next, so only the same starts visited in the same order
give Go's numbers to the last bit.  ``MMUCurve.plot`` samples the MMU at the
window sizes of ``go tool trace``'s /mmu plot.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from decimal import Decimal
from typing import Any

import numpy as np

from goblueprint.errors import UsageError
from goblueprint.timeline._api import (
    G_RUNNING,
    G_SYSCALL,
    K_LABEL,
    K_METRIC,
    K_RANGE_ACTIVE,
    K_RANGE_BEGIN,
    K_RANGE_END,
    K_STATE,
    K_SYNC,
    NO_GOROUTINE,
    R_GOROUTINE,
)

# Go's UtilFlags bits.
STW, BACKGROUND, ASSIST, SWEEP, PER_PROC = 1, 2, 4, 8, 16
FLAG_NAMES = {"stw": STW, "background": BACKGROUND, "assist": ASSIST, "sweep": SWEEP, "perproc": PER_PROC}
# go tool trace's /mmu page opens with these boxes ticked (sweep is off, "System" view).
DEFAULT_FLAGS = STW | BACKGROUND | ASSIST

GOMAXPROCS_METRIC = "/sched/gomaxprocs:threads"
# Windows reported unless asked otherwise: from a scheduling quantum up to a tenth of a second.
DEFAULT_WINDOWS: tuple[int, ...] = (100_000, 1_000_000, 10_000_000, 100_000_000)
_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def parse_windows(text: str) -> list[int]:
    """``100us,1ms,2.5ms,1s`` (a bare number is ns) -> window lengths in ns, as given."""
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s)?", part)
        if match is None:
            raise UsageError(f"bad MMU window {part!r}: expected a duration such as 500us, 2ms or 1s")
        ns = int(Decimal(match[1]) * _UNITS[match[2] or "ns"])
        if ns <= 0:
            raise UsageError(f"bad MMU window {part!r}: must be at least 1ns")
        out.append(ns)
    if not out:
        raise UsageError("no MMU window given")
    return out


def parse_flags(text: str) -> int:
    """``stw,background,assist,sweep,perproc`` (any subset, comma-separated) -> UtilFlags."""
    flags = 0
    for name in filter(None, (part.strip().lower() for part in text.split(","))):
        bit = FLAG_NAMES.get(name)
        if bit is None:
            raise UsageError(f"unknown MMU flag {name!r} (known: {', '.join(FLAG_NAMES)})")
        flags |= bit
    return flags


def flag_names(flags: int) -> list[str]:
    return [name for name, bit in FLAG_NAMES.items() if flags & bit]


def _executing(state: int) -> bool:
    return state == G_RUNNING or state == G_SYSCALL


class Series:
    """One mutator utilization function: utilization ``util[i]`` from ``time[i]`` on."""

    def __init__(self, time: np.ndarray, util: np.ndarray) -> None:
        self.time = time  # int64 ns, increasing
        self.util = util  # float64 in [0, 1]


class UtilCollector:
    """Go's MutatorUtilizationV2 as a pass consumer: ``step`` per event, then ``finish``."""

    def __init__(self, flags: int = DEFAULT_FLAGS) -> None:
        self.flags = flags
        self.per_proc = bool(flags & PER_PROC)
        self.out: list[list[tuple[int, float]]] = []
        self.stw = 0
        self.ps_gc: list[int] = []  # perP.gc: > 0 while GC work holds the P
        self.ps_series: list[int] = []
        self.gc_ps = 0  # how many Ps have gc > 0: Go recounts them after every event
        self.in_gc: set[int] = set()
        self.states: dict[int, int] = {}
        self.bg_mark: set[int] = set()
        self.procs: list[tuple[int, int]] = []  # (time, GOMAXPROCS) at each change
        self.n_sync = 0
        self.last_time: int | None = None
        # Per-P mode: Ps whose recorded series may lag their utilization (see _record).
        self.dirty: set[int] = set()
        # Go adds a utilization point after every event, which addUtil drops unless it
        # differs from the series' last one: only after a change (``changed``), or while
        # a same-time change left the series behind (``behind``), is there work to do.
        self.changed = False
        self.behind = False

    # Go's handleSTW / handleSweep / handleMarkAssist.
    def _is_stw(self, name: str) -> bool:
        return bool(self.flags & STW) and name.startswith("stop-the-world") and "GC" in name

    def _is_sweep(self, name: str) -> bool:
        return bool(self.flags & SWEEP) and name == "GC incremental sweep"

    def _is_assist(self, name: str) -> bool:
        return bool(self.flags & ASSIST) and name == "GC mark assist"

    def _gc_add(self, p: int, delta: int) -> None:
        if not 0 <= p < len(self.ps_gc):
            # Go would index out of range (and panic); such an event carries no P to charge.
            return
        before = self.ps_gc[p]
        after = self.ps_gc[p] = before + delta
        if (before > 0) != (after > 0):
            self.gc_ps += 1 if after > 0 else -1
            self.dirty.add(p)
            self.changed = True

    def event(self, ev: Any) -> None:
        kind = int(ev.kind)
        self.step(ev, kind, ev.state_transition() if kind == K_STATE else None)

    def step(self, ev: Any, kind: int, st: Any) -> None:
        t = ev.time
        self.last_time = t
        if kind == K_STATE:  # most events: kept short
            if not self.ps_gc:
                return
            res = st.resource
            if res.kind == R_GOROUTINE:
                g = res.id
                if g in self.in_gc or g in self.bg_mark:
                    was, now = _executing(st.old), _executing(st.new)
                    if not was and now:
                        self._gc_add(ev.proc, 1)
                    elif was and not now:
                        self._gc_add(ev.proc, -1)
                self.states[g] = st.new
            if self.changed or self.behind:
                self._record(t, self.stw)
            return
        if kind == K_SYNC:
            self.n_sync = ev.sync().n
        elif kind == K_METRIC:
            m = ev.metric()
            if m.name == GOMAXPROCS_METRIC:
                value = m.value
                self._gomaxprocs(t, int(value.uint64() if hasattr(value, "uint64") else value))
        if not self.ps_gc:
            # Nothing is tracked until GOMAXPROCS is known (Go skips these events too).
            return
        stw_before = self.stw
        if kind == K_RANGE_ACTIVE or kind == K_RANGE_BEGIN:
            r = ev.range()
            if kind == K_RANGE_ACTIVE:
                if self.n_sync > 1:
                    # After a full generation an active range is one already tracked.
                    if self.changed or self.behind:
                        self._record(t, stw_before)
                    return
                self._active_fixup(ev, r.name)
            if self._is_stw(r.name):
                self.stw += 1
            elif self._is_sweep(r.name):
                self._gc_add(ev.proc, 1)
            elif self._is_assist(r.name):
                self._gc_add(ev.proc, 1)
                if r.scope.kind == R_GOROUTINE and r.scope.id != NO_GOROUTINE:
                    self.in_gc.add(r.scope.id)
        elif kind == K_RANGE_END:
            r = ev.range()
            if self._is_stw(r.name):
                self.stw -= 1
            elif self._is_sweep(r.name):
                self._gc_add(ev.proc, -1)
            elif self._is_assist(r.name):
                self._gc_add(ev.proc, -1)
                if r.scope.kind == R_GOROUTINE and r.scope.id != NO_GOROUTINE:
                    self.in_gc.discard(r.scope.id)
        elif kind == K_LABEL:
            label = ev.label().label
            if self.flags & BACKGROUND and label.startswith("GC ") and label != "GC (idle)":
                # Per-P, dedicated workers do not count: they kick everything else off
                # their P, so they add no latency to any goroutine (Go's reasoning).
                if not (self.per_proc and label == "GC (dedicated)"):
                    self.bg_mark.add(ev.goroutine)
                    self._gc_add(ev.proc, 1)
        if self.stw != stw_before:
            self.changed = True
        if self.changed or self.behind:
            self._record(t, stw_before)

    def _gomaxprocs(self, t: int, n: int) -> None:
        if len(self.ps_gc) > n:
            if self.per_proc:
                for series in self.ps_series[n:]:
                    _add_util(self.out[series], t, 0.0)
            self.gc_ps -= sum(1 for gc in self.ps_gc[n:] if gc > 0)
            del self.ps_gc[n:], self.ps_series[n:]
            self.dirty = {p for p in self.dirty if p < n}
        while len(self.ps_gc) < n:
            series = 0
            if self.per_proc or not self.out:
                series = len(self.out)
                self.out.append([(t, 1.0)])
            self.ps_gc.append(0)
            self.ps_series.append(series)
            self.dirty.add(len(self.ps_gc) - 1)
        if not self.procs or n != self.procs[-1][1]:
            self.procs.append((t, n))
        self.changed = True

    def _active_fixup(self, ev: Any, name: str) -> None:
        # A range found active at the start: it held its P since the trace began.
        if self._is_assist(name):
            if not _executing(self.states.get(ev.goroutine, 0)):
                return  # an assist whose goroutine is not running costs its P nothing
        elif not self._is_sweep(name):
            return
        if self.per_proc:
            return
        util, procs = self.out[0], self.procs
        mi = pi = 0
        while mi < len(util):
            if pi < len(procs) - 1 and procs[pi + 1][0] < util[mi][0]:
                pi += 1
                continue
            time, u = util[mi]
            u -= 1.0 / procs[pi][1]
            util[mi] = (time, 0.0 if u < 0 else u)
            mi += 1
        self.changed = True  # the series' last value moved

    def _record(self, t: int, stw_before: int) -> None:
        self.changed = False
        if not self.per_proc:
            n = len(self.ps_gc)
            gc_ps = n if self.stw > 0 else self.gc_ps
            util = 1 - gc_ps / n
            series = self.out[0]
            _add_util(series, t, util)
            self.behind = series[-1][1] != util
            return
        if (self.stw > 0) != (stw_before > 0):
            self.dirty.update(range(len(self.ps_gc)))
        # Go adds every P's point after every event; only a P whose recorded series
        # ends on another value than its utilization can change (addUtil drops the rest).
        stw = self.stw > 0
        for p in sorted(self.dirty):
            util = 0.0 if stw or self.ps_gc[p] > 0 else 1.0
            series = self.out[self.ps_series[p]]
            _add_util(series, t, util)
            if series[-1][1] == util:
                self.dirty.discard(p)
        self.behind = bool(self.dirty)

    def finish(self) -> list[Series]:
        """The utilization functions; each ends with utilization 0 at the last event."""
        if self.last_time is None:
            return []
        for series in self.ps_series:
            _add_util(self.out[series], self.last_time, 0.0)
        return [
            Series(np.array([p[0] for p in s], dtype=np.int64), np.array([p[1] for p in s], dtype=np.float64))
            for s in self.out
        ]


def _add_util(util: list[tuple[int, float]], t: int, u: float) -> None:
    """Go's addUtil: drop a repeat, keep the lowest of changes at one timestamp."""
    if util:
        last_t, last_u = util[-1]
        if u == last_u:
            return
        if t == last_t:
            if u < last_u:
                util[-1] = (t, u)
            return
    util.append((t, u))


# -- Go's MMUCurve (gc.go), ported step for step (see the module docstring); the band
# heap is container/heap's, not heapq, whose order among equal bounds differs.

_BANDS_PER_SERIES = 1000
_MAX_TIME = (1 << 63) - 1


class _Integrator:
    """Go's integrator: a position in a series and the integral up to a time."""

    __slots__ = ("pos", "u")

    def __init__(self, u: _MMUSeries, pos: int) -> None:
        self.u = u
        self.pos = pos

    def copy(self) -> _Integrator:
        return _Integrator(self.u, self.pos)

    def advance(self, time: int) -> float:
        times, pos = self.u.times, self.pos
        n = len(times)
        if pos + 8 < n and times[pos + 8] > time:
            while pos + 1 < n and times[pos + 1] <= time:
                pos += 1
        else:
            pos = bisect_right(times, time, pos, n) - 1
        self.pos = pos
        partial = 0.0
        if time != times[pos]:
            partial = self.u.utils[pos] * float(time - times[pos])
        return self.u.sums[pos] + partial

    def next(self, time: int) -> int:
        i = bisect_right(self.u.times, time, self.pos)
        return self.u.times[i] if i < len(self.u.times) else _MAX_TIME


class _MMUSeries:
    """Go's mmuSeries: the function, its running integral and 1000 summary bands."""

    def __init__(self, s: Series) -> None:
        self.times: list[int] = s.time.tolist()
        self.utils: list[float] = s.util.tolist()
        sums, total, prev_t, prev_u = [], 0.0, 0, 0.0
        for t, u in zip(self.times, self.utils, strict=True):
            total += prev_u * float(t - prev_t)
            sums.append(total)
            prev_t, prev_u = t, u
        self.sums = sums
        n = len(self.times)
        num_bands = min(_BANDS_PER_SERIES, n)
        self.duration = self.times[-1] - self.times[0]
        self.band_dur = max(1, (self.duration + num_bands - 1) // num_bands)
        # Per band: lowest utilization in it, integral up to its left edge, integrator there.
        self.band_min: list[float] = []
        self.band_cum: list[float] = []
        self.band_pos: list[int] = []
        left = _Integrator(self, 0)
        for i in range(num_bands + 1):
            start, end = self.band_time(i)
            self.band_cum.append(left.advance(start))
            lowest = 1.0
            j = left.pos
            while j < n and self.times[j] < end:
                lowest = min(lowest, self.utils[j])
                j += 1
            self.band_min.append(lowest)
            self.band_pos.append(left.pos)

    def band_time(self, i: int) -> tuple[int, int]:
        start = i * self.band_dur + self.times[0]
        return start, start + self.band_dur

    def band_bounds(self, series: int, window: int) -> list[tuple[float, int, int]]:
        """Go's mkBandUtil: (lowest possible mean of a window starting in the band, series, band)."""
        bd = self.band_dur
        min_bands = (window + bd - 1) // bd
        max_bands = (window + 2 * (bd - 1)) // bd
        tail = window % bd
        mins, cum = self.band_min, self.band_cum
        out = []
        for i in range(max(0, len(mins) - max_bands + 1)):
            lo, r1, r2 = mins[i], mins[i + min_bands - 1], mins[i + max_bands - 1]
            worst = min(lo, min(r1, r2))
            if min_bands == 1:
                total = worst * float(window)
            else:
                total = worst * float(bd)
                mid = 0.0
                if worst == lo:
                    mid = min(r1, r2)
                elif worst == r1:
                    mid = min(lo, r2)
                elif worst == r2:
                    mid = min(lo, r1)
                total += mid * float(tail)
            if min_bands > 2:
                total += cum[i + min_bands - 1] - cum[i + 1]
            out.append((total / float(window), series, i))
        return out

    def band_mmu(self, band: int, window: int, acc: list[float]) -> None:
        """Go's bandMMU for MMU alone: lower ``acc`` = [mmu] by windows starting in BAND."""
        left = _Integrator(self, self.band_pos[band])
        right = left.copy()
        time, end = self.band_time(band)
        end = min(end, self.times[-1] - window)
        while True:
            mu = (right.advance(time + window) - left.advance(time)) / float(window)
            if mu < acc[0]:
                acc[0] = mu
            if mu == 0 or time == end:
                break
            # The windowed mean moves by at most 1/window per ns: skip what cannot go lower.
            min_time = time + int((mu - acc[0]) * float(window))
            time = min(left.next(time), right.next(time + window) - window)
            if time < min_time:
                time = min_time
            if time >= end:
                time = end


def _down(h: list[tuple[float, int, int]], i0: int, n: int) -> None:
    """container/heap's down, ordered by the bound alone as Go's Less is."""
    i = i0
    while True:
        j1 = 2 * i + 1
        if j1 >= n:
            break
        j = j1
        j2 = j1 + 1
        if j2 < n and h[j2][0] < h[j1][0]:
            j = j2
        if not h[j][0] < h[i][0]:
            break
        h[i], h[j] = h[j], h[i]
        i = j


class MMUCurve:
    """Go's MMUCurve over one or more utilization functions (one per P in per-P mode)."""

    def __init__(self, series: list[Series]) -> None:
        self.series = [_MMUSeries(s) for s in series]

    def mmu(self, window: int) -> float:
        """The minimum mutator utilization over all windows of ``window`` ns."""
        if window <= 0:
            return 0.0
        windows = []
        heap: list[tuple[float, int, int]] = []
        for i, s in enumerate(self.series):
            w = min(window, s.duration)
            windows.append(w)
            if w <= 0:
                continue  # a function without extent: Go would index band -1 and panic
            heap.extend(s.band_bounds(i, w))
        n = len(heap)
        for i in range(n // 2 - 1, -1, -1):  # heap.Init
            _down(heap, i, n)
        acc = [1.0]
        # Refine bands from the lowest bound up while one could still lower the minimum.
        while heap and heap[0][0] < acc[0]:
            _, i, band = heap[0]
            self.series[i].band_mmu(band, windows[i], acc)
            last = len(heap) - 1  # heap.Pop
            heap[0], heap[last] = heap[last], heap[0]
            _down(heap, 0, last)
            heap.pop()
        return acc[0]

    def plot(self, samples: int = 100) -> list[tuple[int, float]]:
        """(window ns, MMU) at the windows of ``go tool trace``'s MMU plot (HandlePlot)."""
        if not self.series:
            return []
        # A start where the MMU is about 0, then six orders of magnitude, at most the trace.
        x_min = 1_000_000_000
        while x_min > 1:
            if self.mmu(x_min) < 0.0001:
                break
            x_min //= 1000
        span = max(s.times[-1] for s in self.series) - min(s.times[0] for s in self.series)
        x_max = min(x_min * 1_000_000, span)
        if x_max <= 0:
            return []
        log_min, log_max = math.log(x_min), math.log(x_max)
        out = []
        for i in range(samples):
            window = int(math.exp(i / (samples - 1) * (log_max - log_min) + log_min))
            out.append((window, self.mmu(window)))
        return out


def mmu(series: list[Series], window: int) -> float:
    return MMUCurve(series).mmu(window)


def curve(series: list[Series], samples: int = 100) -> list[tuple[int, float]]:
    return MMUCurve(series).plot(samples)


def summary(series: list[Series], flags: int, windows: tuple[int, ...] | list[int]) -> dict[str, Any]:
    """What ``trace metrics`` reports: MMU at the asked windows and the plot's curve."""
    c = MMUCurve(series)
    return {
        "flags": flag_names(flags),
        "series": len(series),
        "windows": [{"window_ns": w, "mmu": c.mmu(w)} for w in windows],
        "curve": [{"window_ns": w, "mmu": u} for w, u in c.plot()],
    }
