"""Constants and tables of the compiled ordering engine (engine.py), without numba.

The reader and the message writer need the error codes, the scalar-state
slots and the table columns; importing them from here keeps numba out of a
process that runs the engine ahead-of-time compiled (see kernels/__init__.py).
"""

from __future__ import annotations

import numpy as np

from goblueprint.trace import spec
from goblueprint.trace.events import GO_STATUS_TO_STATE, PROC_STATUS_TO_STATE, GoState, ProcState

S = spec

# -- tables (data from spec.py, as arrays the compiled code indexes) ---------------


def _nargs_table() -> np.ndarray:
    t = np.full(256, -1, dtype=np.int64)
    for i, s in enumerate(S.SPECS):
        if s.args and s.is_timed_event:
            t[i] = len(s.args) - 1
    return t


def _arg_table(attr: str) -> np.ndarray:
    # Indices into the event's args (after the timestamp) naming a stack / string; -1 = none.
    t = np.full((256, 2), -1, dtype=np.int64)
    for i, s in enumerate(S.SPECS):
        for j, a in enumerate(getattr(s, attr)[:2]):
            t[i, j] = a - 1
    return t


def _start_table() -> np.ndarray:
    t = np.zeros(256, dtype=np.int64)
    for i, s in enumerate(S.SPECS):
        t[i] = s.start_ev if s.start_ev else i
    return t


NSPECS = len(S.SPECS)
NARGS = _nargs_table()
STACK_ARGS = _arg_table("stack_ids")
STRING_ARGS = _arg_table("string_ids")
RANGE_START = _start_table()
GO_OLD_STATE = np.array([int(s) for s in GO_STATUS_TO_STATE], dtype=np.int64)
PROC_OLD_STATE = np.array([int(s) for s in PROC_STATUS_TO_STATE], dtype=np.int64)
GS_UNDETERMINED = int(GoState.UNDETERMINED)
PS_UNDETERMINED = int(ProcState.UNDETERMINED)
PS_NOT_EXIST = int(ProcState.NOT_EXIST)
PS_RUNNING = int(ProcState.RUNNING)
PS_IDLE = int(ProcState.IDLE)

NO_ID = -1  # NoGoroutine / NoProc / NoThread; also NoTask as a uint64 bit pattern
GC_UNDETERMINED, GC_NOT_RUNNING, GC_RUNNING = 0, 1, 2
MUST_NOT_HAVE, MAY_HAVE, MUST_HAVE = 0, 1, 2

# Scalar state: indices into EngineState.sc.
(
    SC_GN,  # goroutine rows used
    SC_PN,
    SC_MN,
    SC_GC_SEQ,
    SC_GC_STATE,
    SC_INITIAL_GEN,
    SC_LAST_TS,
    SC_NOUT,  # events out of the last generation
    SC_GFILL,  # filled buckets (live + deleted) of the goroutine/proc/thread/task maps
    SC_PFILL,
    SC_MFILL,
    SC_TFILL,
    SC_FL_N,  # rows used in the range pool, and its free list (-1 = empty)
    SC_FL_FREE,
    SC_RG_N,  # rows used in the region pool, and its free list
    SC_RG_FREE,
    SC_TK_N,  # task rows used
) = range(17)
SC_SIZE = 17

# Columns of the state tables.
G_ID, G_ST, G_SEQ, G_SGEN, G_REG, G_FH, G_FT = range(7)  # G_ST -1: the goroutine is gone
P_ID, P_ST, P_SEQ, P_SGEN, P_FH, P_FT = range(6)
M_ID, M_G, M_P = range(3)

# Error codes.  Params go to ep[0..]; the formatter in messages.py knows their meaning.
E_NONE = 0
# validateCtx, in Go's order of checks
E_CTX_M_MUST, E_CTX_M_NOT, E_CTX_P_MUST, E_CTX_P_NOT, E_CTX_G_MUST, E_CTX_G_NOT = range(1, 7)
(
    E_BAD_TYPE,  # typ
    E_PROC_INVALID_STATUS,  # pid, status
    E_PROC_INCONSISTENT,  # pid, old, new
    E_PROC_NO_CTX,  # pid
    E_PROC_MISSING,  # typ, p
    E_PROC_NOT_RUNNING_OR_SYSCALL,  # typ
    E_SELF_STEAL,  # pid, mid, p
    E_STEAL_NO_THREAD,  # mid
    E_STEAL_WRONG_PROC,  # pid, mid, ms.p
    E_GO_INVALID_STATUS,  # gid, status
    E_GO_INCONSISTENT,  # gid, old, new
    E_GO_NEW_AFTER_FIRST,  # gid, status
    E_GO_SYSCALL_NO_THREAD,  # gid
    E_GO_SYSCALL_THREAD,  # gid, g
    E_GO_NOT_RUNNING,  # typ
    E_GO_EXISTS,  # newgid
    E_GO_MISSING,  # typ, g
    E_PROC_UNINIT,  # p, typ
    E_SYSCALL_SEQ,  # typ, seq, seqgen, newseq, gen
    E_PROC_NOT_SYSCALL,  # p, status
    E_GO_SYSCALL_EXISTS,  # newgid
    E_GO_NOT_SYSCALL,  # typ
    E_PROC_INVALID,  # p, typ
    E_PROC_UNEXPECTED,  # p, status, typ
    E_TASK_CONFLICT,  # tid
    E_STRING_ID,  # sid, typ
    E_REGION_BEGIN_NO_G,  # g
    E_REGION_END_NO_G,  # g
    E_REGION_MISUSE,  # g, task, name, top task, top name (names: global string ids)
    E_GC_ACTIVE_FIRST,
    E_GC_ACTIVE_NOT_RUNNING,
    E_GC_BEGIN_RUNNING,
    E_GC_END_NOT_RUNNING,
    E_GC_END_UNDETERMINED,
    E_SWEEP_UNKNOWN_PROC,  # pid
    E_RANGE_IN_FLIGHT,  # start typ
    E_RANGE_ACTIVE_FIRST,  # typ, desc
    E_RANGE_MISSING,  # typ, n, then n pairs (typ, desc)
    E_RANGE_NOT_IN_FLIGHT,  # start typ
    E_RANGE_NO_G,  # typ, g
    E_RANGE_UNINIT_G,  # gid, typ
    E_FAILED_TO_ADVANCE,  # (the frontier: see the cursor arrays)
    E_STACK_ID,  # id, typ        (validateTableIDs)
    E_STRING_ID_TABLE,  # id, typ
    E_WIRE_TYPE,  # typ           (batch decoding)
    E_WIRE_UNTIMED,  # typ
    E_WIRE_TS,
    E_WIRE_ARG,
) = range(7, 55)

EP_SIZE = 64

# Cursor state (columns of the per-generation cursor array, one row per M): the batch
# being read and the byte position in it, the front event decoded from it (its time
# is in the separate c_time array the cursor heap is keyed by), and a decoding error
# that stops the cursor once its good events are used up.
(
    CS_B,  # current batch (index into the generation's batch arrays)
    CS_BEND,  # one past the cursor's last batch
    CS_POS,  # byte position of the next event in the current batch
    CS_END,  # end of the current batch
    CS_LAST,  # last timestamp of the current batch (deltas add to it)
    CS_LIVE,  # 1 when the front event is valid
    CS_TYP,  # front event: type, args, byte offset
    CS_A0,
    CS_A1,
    CS_A2,
    CS_A3,
    CS_OFF,
    CS_ERR,  # decoding error code after the front event (0 = none)
    CS_ERR_OFF,
    CS_ERR_TYP,
    CS_SLOT,  # the M's row in the thread table (-1 until its first advance)
) = range(16)
CS_SIZE = 16

# Run state of the generation being ordered (survives between steps).
RS_STARTED, RS_HN, RS_CI, RS_STATUS = range(4)
RS_SIZE = 4
# RS_STATUS after a step: the generation is finished (or failed), the output buffer
# is full, or a state table needs more rows (grown before the step goes on).
ST_DONE, ST_FULL, ST_ROOM = range(3)
