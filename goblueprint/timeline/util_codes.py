"""The utilization loop's codes and record layouts, numba-free (mmu.py and util_kernel.py share them)."""

from __future__ import annotations

import numpy as np

# Go's UtilFlags bits.
STW, BACKGROUND, ASSIST, SWEEP, PER_PROC = 1, 2, 4, 8, 16

# What a string means to the loop, as bits (one string may be both a range's name and a label):
# a GC stop-the-world range, the sweep range, the assist range, a background mark worker's
# label, the dedicated worker's label, the GOMAXPROCS metric.
S_STW, S_SWEEP, S_ASSIST, S_BG_LABEL, S_DEDICATED, S_GOMAXPROCS = 1, 2, 4, 8, 16, 32

# The loop's scalar state (one record).
STATE = np.dtype(
    [
        ("flags", np.int64),
        ("stw", np.int64),  # stop-the-world depth
        ("n_ps", np.int64),  # len(perP): GOMAXPROCS once known, 0 until then
        ("gc_ps", np.int64),  # how many Ps have gc > 0
        ("n_sync", np.int64),  # Syncs seen
        ("last_time", np.int64),
        ("seen", np.bool_),  # any event yet (last_time is set)
        ("changed", np.bool_),  # utilization changed since the last point was added
        ("behind", np.bool_),  # a same-time change left a series behind its utilization
        ("n_series", np.int64),
        ("n_points", np.int64),
        ("n_procs", np.int64),
    ],
    align=True,
)
# Per P: GC work holding it (> 0 while it does), the series it feeds, whether that may lag.
PSTATE = np.dtype([("gc", np.int64), ("series", np.int64), ("dirty", np.bool_)], align=True)
# Per goroutine slot: in a mark assist, a background mark worker, its last state.
GSTATE = np.dtype([("in_gc", np.bool_), ("bg_mark", np.bool_), ("state", np.int8)])
# A utilization point of a series, in the order added; LAST[series] is its last point's index.
POINT = np.dtype([("series", np.int64), ("time", np.int64), ("util", np.float64)])
# (time, GOMAXPROCS) at each change.
PROCS = np.dtype([("time", np.int64), ("n", np.int64)])

NEED_ROOM = 1  # a return code: grow the buffers (points, series, Ps) and call again
