"""The timeline builder loop's layout and codes, numba-free (builder.py and the loop share them).

Table columns are named here; see builder_kernel.py for what each table holds.
"""

from __future__ import annotations

# Re-exported: the loop takes the Event API codes from here too.
from goblueprint.timeline._api import (  # noqa: F401
    G_NOT_EXIST,
    G_RUNNABLE,
    G_RUNNING,
    G_SYSCALL,
    G_UNDETERMINED,
    G_WAITING,
    K_LABEL,
    K_LOG,
    K_METRIC,
    K_RANGE_ACTIVE,
    K_RANGE_BEGIN,
    K_RANGE_END,
    K_REGION_BEGIN,
    K_REGION_END,
    K_STACK_SAMPLE,
    K_STATE,
    K_SYNC,
    K_TASK_BEGIN,
    K_TASK_END,
    P_IDLE,
    P_RUNNING,
    R_GOROUTINE,
    R_NONE,
    R_PROC,
)
from goblueprint.timeline.model import FlowKind, InstantKind, LaneKind, State

NONE = -1

# E: one row per event (the store's columns; *S = slot of the id beside it, -1 = none).
E_KIND, E_TIME, E_G, E_P, E_M, E_GS, E_PS, E_MS, E_STACK = range(9)
E_RK, E_RID, E_RS, E_OLD, E_NEW, E_REASON, E_TSTACK, E_NAME, E_MSG = range(9, 18)
E_TASK, E_PARENT, E_TS = range(18, 21)
E_WIDTH = 21

# The open span of a G, P or M lane: the first columns of G, P and M.
O_OPEN, O_S, O_STATE, O_G, O_P, O_M, O_LABEL, O_STACK = range(8)
# G: state (-1 = never seen in a transition), name stack (first non-empty transition stack),
# pending flow (C_*: why it may run next), block reason, top of its open regions (-1 none).
G_STATE, G_NAME, G_HASC, C_KIND, C_FROMG, C_FROMP, C_TIME, C_LABEL, C_STACK = range(8, 17)
G_BLOCK, G_RTOP = 17, 18
G_WIDTH = 19
# P: state (-1 = never seen), the thread slot holding it (-1 none).
P_STATE, P_OWNER = 8, 9
P_WIDTH = 10
# M: its context (has one, P slot, G slot, M lane state).
M_HAS, M_CP, M_CG, M_CST = 8, 9, 10, 11
M_WIDTH = 12
# T: an open task (parent task id, type, stack).
T_OPEN, T_S, T_PARENT, T_LABEL, T_STACK = range(5)
T_WIDTH = 5
# RG: open regions; RG_PREV links a goroutine's stack (and the free list).
RG_S, RG_G, RG_TASK, RG_DEPTH, RG_LABEL, RG_STACK, RG_PREV = range(7)
RG_WIDTH = 7
# RA: open ranges, keyed by (lane kind, lane, name).
RA_KIND, RA_LANE, RA_NAME, RA_S, RA_STATE, RA_G, RA_P, RA_M, RA_LABEL, RA_STACK = range(10)
RA_WIDTH = 10

# SC: scalars.
SC_STW, SC_SYNC, SC_FIRST, SC_HAVE_FIRST, SC_LAST = range(5)
SC_CNT = 5  # three counts: goroutines running, runnable, in syscall
SC_ALIVE = 8
SC_NSP, SC_NFL, SC_NCT, SC_NIN = 9, 10, 11, 12  # rows used in the output tables
SC_NRG, SC_RFREE, SC_OPENREG, SC_NRA = 13, 14, 15, 16  # region pool, open ranges
SC_NPS = 17  # P slots in use (set by the builder)
SC_RTOP_NONE = 18  # region stack of events without a goroutine
SC_NEED_SP = 19  # span rows the event that stopped the loop may emit
SC_WIDTH = 20

# Output tables.
SP_WIDTH = 10  # spans, in SPANS_SCHEMA order
FL_KIND, FL_G, FL_FROMG, FL_FROMP, FL_FROMT, FL_TOP, FL_TOM, FL_TOT, FL_LABEL, FL_STACK = range(10)
FL_WIDTH = 10
CT_WIDTH = 2  # counters (name, time); values in a float64 array beside
IN_WIDTH = 9  # instants, in INSTANTS_SCHEMA order

# String classes (SCL, per interner string id): flags, and the range state its name gives.
SCL_STW, SCL_FOREVER, SCL_GOMAXPROCS = 1, 2, 4

# Strings the builder makes up (negative, resolved by finish()).
SYN_GO, SYN_EXIT_SYSCALL = -2, -3
SYN_COUNT = -4  # -4, -5, -6: "goroutines running", "... runnable", "... in syscall"
SYN_ALIVE = -7  # "goroutines"
SYN_UNBLOCK = -8  # -8 - reason: "unblock (<reason>)", or "unblock" for reason 0 ("")

L_G, L_P, L_M, L_GC, L_STW = (
    int(LaneKind.G),
    int(LaneKind.P),
    int(LaneKind.M),
    int(LaneKind.GC),
    int(LaneKind.STW),
)
L_GRANGE, L_PRANGE, L_REGION, L_TASK = (
    int(LaneKind.GRANGE), int(LaneKind.PRANGE), int(LaneKind.REGION), int(LaneKind.TASK),
)  # fmt: skip
S_G_RUNNING, S_G_RUNNABLE = int(State.G_RUNNING), int(State.G_RUNNABLE)
S_G_WAITING, S_G_SYSCALL = int(State.G_WAITING), int(State.G_SYSCALL)
S_P_RUNNING, S_P_IDLE, S_P_STOPPED = int(State.P_RUNNING), int(State.P_IDLE), int(State.P_STOPPED)
S_M_RUNNING, S_M_SYSCALL, S_M_IDLE = int(State.M_RUNNING), int(State.M_SYSCALL), int(State.M_IDLE)
S_STW, S_RANGE, S_REGION, S_TASK = int(State.STW), int(State.RANGE), int(State.REGION), int(State.TASK)
F_WAKEUP, F_CREATE = int(FlowKind.WAKEUP), int(FlowKind.CREATE)
F_SYSCALL_EXIT, F_REQUEUE = int(FlowKind.SYSCALL_EXIT), int(FlowKind.REQUEUE)
I_LOG, I_TASK_BEGIN, I_TASK_END = int(InstantKind.LOG), int(InstantKind.TASK_BEGIN), int(InstantKind.TASK_END)
I_STACK_SAMPLE, I_GOMAXPROCS = int(InstantKind.STACK_SAMPLE), int(InstantKind.GOMAXPROCS)
I_LABEL, I_SYNC = int(InstantKind.LABEL), int(InstantKind.SYNC)
