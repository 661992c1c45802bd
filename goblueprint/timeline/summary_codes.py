"""The goroutine summary loop's record layouts and codes, numba-free (summary.py and
summary_kernel.py share them; see summary_kernel.py for what each table holds)."""

from __future__ import annotations

import numpy as np

_I = np.int64
STATS = np.dtype(
    [("exec", _I), ("sched", _I), ("syscall", _I), ("sysblock", _I), ("total", _I),
     ("bh", _I), ("bt", _I), ("nb", _I), ("rh", _I), ("rt", _I), ("nr", _I)]
)  # fmt: skip
ENTRY = np.dtype([("key", _I), ("val", _I), ("next", _I)])
GOROUTINE = np.dtype(
    [("gid", _I), ("rank", _I), ("live", _I), ("creation", _I), ("start", _I), ("end", _I),
     ("name", _I), ("pc", _I), ("stats", _I),
     # Go's private goroutineSummary (what is pending while events stream in):
     ("last_start", _I), ("last_runnable", _I), ("last_block", _I), ("last_block_reason", _I),
     ("last_syscall", _I), ("last_syscall_block", _I),
     ("ph", _I), ("pt", _I), ("np", _I),  # lastRangeTime as a list of E rows
     ("frozen", _I),  # lastRangeTime is Go's nil map after finalize: writes are dropped
     ("top", _I)]  # innermost active region, -1 = none
)  # fmt: skip
REGION = np.dtype(
    [("task", _I), ("name", _I), ("start", _I), ("has_start", _I), ("end", _I), ("has_end", _I),
     ("stats", _I), ("below", _I), ("owner", _I), ("g_seq", _I), ("task_slot", _I), ("t_seq", _I)]
)  # fmt: skip
TASK = np.dtype(
    [("id", _I), ("name", _I), ("parent", _I), ("has_parent", _I), ("start", _I), ("has_start", _I),
     ("end", _I), ("has_end", _I), ("logs", _I), ("child_of", _I), ("child_seq", _I)]
)  # fmt: skip
PAIR = np.dtype([("task", _I), ("gid", _I)])

# Hash namespaces: Go's gs, tasks, task.Goroutines, syscallingP, syscallingG, rangesP.
NS_G, NS_TASK, NS_PAIR, NS_SYSP, NS_SYSG, NS_RANGEP = 0, 1, 2, 3, 4, 5

# Scalar state (one int64 array).
(
    SC_FIRST_SET, SC_FIRST_TS, SC_LAST_TS, SC_SYNC_TS,
    SC_GN, SC_SN, SC_EN, SC_RN, SC_TN, SC_PN, SC_HFILL,
    SC_RANKS, SC_GSEQ, SC_TSEQ, SC_CSEQ, SC_SIZE,
) = range(16)  # fmt: skip

OK, ERR_UNSEEN = 0, 1
BLOCK, RANGE = 0, 1  # which map of an ExecStats
MODE_CHUNK, MODE_FINALIZE = 0, 1


def new_state() -> tuple[np.ndarray, ...]:
    """Empty state (sc, G, S, E, R, T, P, H), small: every table grows with the trace."""
    sc = np.zeros(SC_SIZE, np.int64)
    h = np.full((64, 4), -1, np.int64)
    return (sc, np.zeros(16, GOROUTINE), np.zeros(16, STATS), np.zeros(64, ENTRY), np.zeros(4, REGION),
            np.zeros(4, TASK), np.zeros(4, PAIR), h)  # fmt: skip
