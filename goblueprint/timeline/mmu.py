"""Minimum mutator utilization (MMU), as Go's ``internal/trace/gc.go`` defines it.

``UtilCollector`` follows ``MutatorUtilizationV2`` event by event (a compiled loop over
the pass's columns, util_kernel.py): the mutator
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
window sizes of ``go tool trace``'s /mmu plot, computed with Go's own ``math.Log`` and
``math.Exp`` (go_float.py), whose last bits decide a window's last nanosecond.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from decimal import Decimal
from typing import Any

import numpy as np

from goblueprint.errors import TraceError, UsageError
from goblueprint.timeline import util_codes as uc
from goblueprint.timeline._api import (
    K_LABEL,
    K_METRIC,
    K_RANGE_ACTIVE,
    R_GOROUTINE,
)
from goblueprint.timeline.go_float import go_exp, go_log
from goblueprint.timeline.util_codes import ASSIST, BACKGROUND, PER_PROC, STW, SWEEP
from goblueprint.trace import kernels

FLAG_NAMES = {"stw": STW, "background": BACKGROUND, "assist": ASSIST, "sweep": SWEEP, "perproc": PER_PROC}
# go tool trace's /mmu page opens with these boxes ticked (sweep is off, "System" view).
DEFAULT_FLAGS = STW | BACKGROUND | ASSIST

GOMAXPROCS_METRIC = "/sched/gomaxprocs:threads"
_MAX_PROCS = 1 << 20  # a GOMAXPROCS metric above this is a corrupt trace, not a machine
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


class Series:
    """One mutator utilization function: utilization ``util[i]`` from ``time[i]`` on."""

    def __init__(self, time: np.ndarray, util: np.ndarray) -> None:
        self.time = time  # int64 ns, increasing
        self.util = util  # float64 in [0, 1]


class UtilCollector:
    """Go's MutatorUtilizationV2 as a columnar pass consumer (util_kernel), then ``finish``."""

    def __init__(self, flags: int = DEFAULT_FLAGS) -> None:
        from goblueprint.timeline.slots import Slots

        self.flags = flags
        self.state = np.zeros(1, uc.STATE)
        self.state["flags"][0] = flags
        self.ps = np.zeros(0, uc.PSTATE)
        self.gs = np.zeros(0, uc.GSTATE)
        self.points = np.zeros(0, uc.POINT)
        self.last = np.zeros(0, np.int64)
        self.procs = np.zeros(0, uc.PROCS)
        self.slots = Slots()
        self.bits = np.zeros(0, np.int8)  # what each string id means to the loop (util_codes.S_*)

    def _string_bits(self, strings: list[str]) -> None:
        """Each new string's meaning, decided once per string (Go's handleSTW/Sweep/MarkAssist)."""
        have = len(self.bits)
        if have == len(strings):
            return
        new = np.zeros(len(strings) - have, np.int8)
        for i, name in enumerate(strings[have:]):
            b = 0
            if name.startswith("stop-the-world") and "GC" in name:
                b |= uc.S_STW
            if name == "GC incremental sweep":
                b |= uc.S_SWEEP
            if name == "GC mark assist":
                b |= uc.S_ASSIST
            if name.startswith("GC ") and name != "GC (idle)":
                b |= uc.S_BG_LABEL
            if name == "GC (dedicated)":
                b |= uc.S_DEDICATED
            if name == GOMAXPROCS_METRIC:
                b |= uc.S_GOMAXPROCS
            new[i] = b
        self.bits = np.concatenate([self.bits, new])

    def _room(self, procs: int) -> None:
        """Buffers with room for PROCS Ps and for what one more row can add (util_kernel)."""
        from goblueprint.timeline.slots import grown

        st = self.state[0]  # a view: read at the time of the call
        self.ps = grown(self.ps, procs)
        cap_p = len(self.ps)
        self.points = grown(self.points, int(st["n_points"]) + 3 * cap_p + 4)
        self.last = grown(self.last, int(st["n_series"]) + cap_p + 1, -1)
        self.procs = grown(self.procs, int(st["n_procs"]) + 1)

    def columns(self, cols: dict[str, np.ndarray], interner: Any) -> None:
        from goblueprint.timeline.slots import grown

        kind = cols["kind"]
        n = len(kind)
        if not n:
            return
        self._string_bits(interner.strings)
        rkind, rid, name = cols["resource_kind"], cols["resource_id"], cols["name"]
        # Goroutine slots where the loop may index its per-goroutine state: a resource that is a
        # goroutine, and the event's goroutine of labels and active ranges.
        rslot = np.full(n, -1, np.int64)
        gslot = np.full(n, -1, np.int64)
        at_r = np.flatnonzero(rkind == R_GOROUTINE)
        at_g = np.flatnonzero((kind == K_LABEL) | (kind == K_RANGE_ACTIVE))
        slots = self.slots.map(np.concatenate([rid[at_r], cols["goroutine"][at_g]]))
        rslot[at_r] = slots[: len(at_r)]
        gslot[at_g] = slots[len(at_r) :]
        self.gs = grown(self.gs, self.slots.n)
        # GOMAXPROCS values of this chunk: the per-P table is made big enough for them first.
        metric = np.flatnonzero(kind == K_METRIC)
        gomaxprocs = metric[(self.bits[name[metric]] & uc.S_GOMAXPROCS) != 0]
        procs = int(cols["value"][gomaxprocs].max()) if len(gomaxprocs) else 0
        if procs > _MAX_PROCS:
            # Go would make a per-P table that big and fail; we say what the trace claims.
            raise TraceError(f"GOMAXPROCS metric of {procs} is beyond any machine (at most {_MAX_PROCS})")
        args = (kind, cols["time"], cols["proc"], rkind, rid, rslot, gslot, cols["old_state"],
                cols["new_state"], name, cols["value"], self.bits)  # fmt: skip
        utilization_rows = kernels.get().utilization_rows
        row = 0
        while row < n:
            self._room(procs)
            _, row = utilization_rows(*args, self.state, self.ps, self.gs, self.points, self.last,
                                      self.procs, row, False)  # fmt: skip

    def finish(self) -> list[Series]:
        """The utilization functions; each ends with utilization 0 at the last event."""
        st = self.state[0]
        if not st["seen"]:
            return []
        self._room(0)
        no_rows = np.zeros(0, np.int64)
        e8, u8 = np.zeros(0, np.int8), np.zeros(0, np.uint8)
        kernels.get().utilization_rows(u8, no_rows, no_rows, u8, no_rows, no_rows, no_rows, e8, e8,
                                       np.zeros(0, np.int32), np.zeros(0, np.uint64), self.bits, self.state,
                                       self.ps, self.gs, self.points, self.last, self.procs, 0, True)  # fmt: skip
        # The points, a row each (24 bytes: 7.4 M of them on a 462 MB trace), in a buffer grown
        # by doubling: cut to them in place, not copied, and sorted by series only if they are
        # not already (a flag set of one series never needs it).
        points, self.points = self.points, np.zeros(0, uc.POINT)
        n = int(st["n_points"])
        try:
            points.resize(n, refcheck=True)
        except ValueError:  # a view of the buffer is held elsewhere: a copy instead
            points = points[:n].copy()
        series = points["series"]
        if n > 1 and bool((series[1:] < series[:-1]).any()):
            points = points[np.argsort(series, kind="stable")]
            series = points["series"]
        bounds = np.searchsorted(series, np.arange(int(st["n_series"]) + 1)).tolist()
        del series
        out = []
        for lo, hi in itertools.pairwise(bounds):
            out.append(Series(points["time"][lo:hi].copy(), points["util"][lo:hi].copy()))
        return out


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
        times, pos = self.u.t, self.pos
        n = len(times)
        if pos + 8 < n and times[pos + 8] > time:
            while pos + 1 < n and times[pos + 1] <= time:
                pos += 1
        else:
            pos = bisect_right(times, time, pos, n) - 1
        self.pos = pos
        partial = 0.0
        if time != times[pos]:
            partial = self.u.u[pos] * float(time - times[pos])
        return self.u.s[pos] + partial

    def next(self, time: int) -> int:
        times, pos = self.u.t, self.pos
        n = len(times)
        # Most often the point the integrator stands on or the one after it (a bisect's first).
        if pos < n and times[pos] > time:
            return times[pos]
        if pos + 1 < n and times[pos + 1] > time:
            return times[pos + 1]
        i = bisect_right(times, time, pos)
        return times[i] if i < n else _MAX_TIME


class _MMUSeries:
    """Go's mmuSeries: the function, its running integral and 1000 summary bands."""

    def __init__(self, s: Series) -> None:
        # Arrays, not lists: a list holds an object a point (7.4 M points on a 462 MB trace,
        # ~1 GB as three lists).
        times = self.times = np.ascontiguousarray(s.time, np.int64)
        utils = self.utils = np.ascontiguousarray(s.util, np.float64)
        n = len(times)
        # Go's running integral, sum += prev.util * float64(t - prev.time) from (0, 0): a
        # float64 accumulate adds left to right, as that loop does, so every sum is Go's.
        step = np.zeros(n, np.float64)
        step[1:] = utils[:-1] * (times[1:] - times[:-1]).astype(np.float64)
        self.sums = np.cumsum(step)
        # The integrator's and the bands' point by point reads, through memoryviews: each gives
        # a Python int or float (a numpy scalar made per read, and a searchsorted per step,
        # made the MMU plot of that trace 2.5 times slower), and bisect runs over them.
        self.t, self.u, self.s = memoryview(times), memoryview(utils), memoryview(self.sums)
        num_bands = min(_BANDS_PER_SERIES, n)
        self.duration = int(times[-1] - times[0])
        self.band_dur = max(1, (self.duration + num_bands - 1) // num_bands)
        # Per band: lowest utilization in it, integral up to its left edge, integrator there
        # (where Go's integrator advanced to the band's start stands: the last point at or
        # before it; the band's points run from there to the first at or past its end).
        starts = np.arange(num_bands + 1, dtype=np.int64) * self.band_dur + times[0]
        pos = np.searchsorted(times, starts, "right") - 1
        ends = np.maximum(np.searchsorted(times, starts + self.band_dur, "left"), pos + 1)
        self.band_pos: list[int] = pos.tolist()
        self.band_cum: list[float] = []
        self.band_min: list[float] = []
        for start, p, e in zip(starts.tolist(), self.band_pos, ends.tolist(), strict=True):
            t = int(times[p])
            partial = float(utils[p]) * float(start - t) if start != t else 0.0
            self.band_cum.append(float(self.sums[p]) + partial)
            self.band_min.append(min(1.0, float(utils[p:e].min())))

    def band_time(self, i: int) -> tuple[int, int]:
        start = i * self.band_dur + int(self.times[0])
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
        end = min(end, int(self.times[-1]) - window)
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
        # Go's Log and Exp, not libm's: they are an ulp apart often enough to move a window by
        # 1 ns (e.g. the last one, exp(log(x_max)), truncated to x_max - 1 with libm's).
        log_min, log_max = go_log(float(x_min)), go_log(float(x_max))
        out = []
        for i in range(samples):
            window = int(go_exp(i / (samples - 1) * (log_max - log_min) + log_min))
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
