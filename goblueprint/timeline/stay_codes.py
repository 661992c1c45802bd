"""The pprof stays loop's record layouts, numba-free (pprof.py and stay_kernel.py share them)."""

from __future__ import annotations

import numpy as np

# Per type and goroutine slot: is a stay open, since when, with the stack of the event that opened it.
TRACK = np.dtype([("open", np.bool_), ("start", np.int64), ("stack", np.int32)], align=True)
# One ended stay: the profile type's index, the goroutine, its extent, the entering event's stack
# and the 1-based index in the pass of the event that ended it.
STAY = np.dtype(
    [("type", np.int8), ("g", np.int64), ("start", np.int64), ("end", np.int64), ("stack", np.int32),
     ("end_seq", np.int64)],
    align=True,
)  # fmt: skip
