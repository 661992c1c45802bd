"""Go's error messages for the compiled engine's error codes (see engine.py).

The engine reports a code, a few int64 parameters and, for "failed to advance",
the frontier and the scheduler state; this module writes the same text Go's
reader (order.go, reader.go, batchcursor.go) writes.  IDs Go keeps as int64
(goroutines, procs, threads) print signed; raw arguments (sequence numbers,
task IDs, string and stack IDs) print as Go's uint64.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from goblueprint.trace import spec
from goblueprint.trace.kernels import codes as E

_MASK = (1 << 64) - 1
_GC_STATE_NAMES = ("Undetermined", "NotRunning", "Running")


def u(x: int) -> int:
    """An int64 bit pattern as Go's uint64."""
    return int(x) & _MASK


def _spec_name(typ: int) -> str:
    return spec.SPECS[typ].name if 0 <= typ < len(spec.SPECS) else ""


_CTX = {
    E.E_CTX_M_MUST: "expected a thread but didn't have one",
    E.E_CTX_M_NOT: "expected no thread but had one",
    E.E_CTX_P_MUST: "expected a proc but didn't have one",
    E.E_CTX_P_NOT: "expected no proc but had one",
    E.E_CTX_G_MUST: "expected a goroutine but didn't have one",
    E.E_CTX_G_NOT: "expected no goroutine but had one",
    E.E_GC_ACTIVE_FIRST: "GCActive in the first generation isn't first GC event",
    E.E_GC_ACTIVE_NOT_RUNNING: "encountered GCActive while GC was not in progress",
    E.E_GC_BEGIN_RUNNING: "encountered GCBegin while GC was already in progress",
    E.E_GC_END_NOT_RUNNING: "encountered GCEnd when GC was not in progress",
    E.E_GC_END_UNDETERMINED: "encountered GCEnd when GC was in an undetermined state",
    E.E_WIRE_TS: "found invalid uvarint for timestamp",
    E.E_WIRE_ARG: "found invalid uvarint",
}


def _formatters(version: int, name: Callable[[int], str]) -> dict[int, Callable[[Sequence[int]], str]]:
    def ev(typ: int) -> str:
        return spec.event_name(version, int(typ))

    pn = spec.proc_status_name
    gn = spec.go_status_name
    return {
        E.E_BAD_TYPE: lambda a: f"bad event type found while ordering: {a[0]}",
        E.E_PROC_INVALID_STATUS: lambda a: f"invalid status for proc {a[0]}: {a[1]}",
        E.E_PROC_INCONSISTENT: lambda a: (
            f"inconsistent status for proc {a[0]}: old {pn(a[1])} vs. new {pn(a[2])}"
        ),
        E.E_PROC_NO_CTX: lambda a: f"failed to find sched context for proc {a[0]} that's about to be stolen",
        E.E_PROC_MISSING: lambda a: f"event {ev(a[0])} for proc ({a[1]}) that doesn't exist",
        E.E_PROC_NOT_RUNNING_OR_SYSCALL: lambda a: f"{ev(a[0])} event for proc that's not Running or Syscall",
        E.E_SELF_STEAL: lambda a: (
            f"tried to self-steal proc {a[0]} (thread {a[1]}), but got proc {a[2]} instead"
        ),
        E.E_STEAL_NO_THREAD: lambda a: f"stole proc from non-existent thread {a[0]}",
        E.E_STEAL_WRONG_PROC: lambda a: (
            f"tried to steal proc {a[0]} from thread {a[1]}, but got proc {a[2]} instead"
        ),
        E.E_GO_INVALID_STATUS: lambda a: f"invalid status for goroutine {a[0]}: {a[1]}",
        E.E_GO_INCONSISTENT: lambda a: (
            f"inconsistent status for goroutine {a[0]}: old {gn(a[1])} vs. new {gn(a[2])}"
        ),
        E.E_GO_NEW_AFTER_FIRST: lambda a: (
            f"found goroutine status for new goroutine after the first generation: id={a[0]} status={gn(a[1])}"
        ),
        E.E_GO_SYSCALL_NO_THREAD: lambda a: f"found goroutine {a[0]} in syscall without a thread",
        E.E_GO_SYSCALL_THREAD: lambda a: (
            f"inconsistent thread for syscalling goroutine {a[0]}: thread has goroutine {a[1]}"
        ),
        E.E_GO_NOT_RUNNING: lambda a: f"{ev(a[0])} event for goroutine that's not Running",
        E.E_GO_EXISTS: lambda a: f"tried to create goroutine ({a[0]}) that already exists",
        E.E_GO_MISSING: lambda a: f"event {ev(a[0])} for goroutine ({a[1]}) that doesn't exist",
        E.E_PROC_UNINIT: lambda a: f"uninitialized proc {a[0]} found during {ev(a[1])}",
        E.E_SYSCALL_SEQ: lambda a: (
            f"failed to advance {ev(a[0])}: can't make sequence: {u(a[1])} (gen={a[2]}) -> {u(a[3])} (gen={a[4]})"
        ),
        E.E_PROC_NOT_SYSCALL: lambda a: f"expected proc {a[0]} in state Syscall, but got {pn(a[1])} instead",
        E.E_GO_SYSCALL_EXISTS: lambda a: f"tried to create goroutine ({a[0]}) in syscall that already exists",
        E.E_GO_NOT_SYSCALL: lambda a: f"{ev(a[0])} event for goroutine that's not Syscall",
        E.E_PROC_INVALID: lambda a: f"found invalid proc {a[0]} during {ev(a[1])}",
        E.E_PROC_UNEXPECTED: lambda a: f"proc {a[0]} in unexpected state {pn(a[1])} during {ev(a[2])}",
        E.E_TASK_CONFLICT: lambda a: f"task ID conflict: {u(a[0])}",
        E.E_STRING_ID: lambda a: f"invalid string ID {u(a[0])} for {a[1]} event",
        E.E_REGION_BEGIN_NO_G: lambda a: (
            f"encountered EvUserRegionBegin without known state for current goroutine {a[0]}"
        ),
        E.E_REGION_END_NO_G: lambda a: (
            f"encountered EvUserRegionEnd without known state for current goroutine {a[0]}"
        ),
        E.E_REGION_MISUSE: lambda a: (
            f"misuse of region in goroutine {a[0]}: region end {{{u(a[1])} {name(a[2])}}} "
            f"when the inner-most active region start event is {{{u(a[3])} {name(a[4])}}}"
        ),
        E.E_SWEEP_UNKNOWN_PROC: lambda a: f"encountered GCSweepActive for unknown proc {a[0]}",
        E.E_RANGE_IN_FLIGHT: lambda a: (
            f"discovered event already in-flight for when starting event {_spec_name(a[0])}"
        ),
        E.E_RANGE_ACTIVE_FIRST: lambda a: (
            f"found named active range already in first gen: {{{a[0]} {u(a[1])}}}"
        ),
        E.E_RANGE_MISSING: lambda a: (
            f"resource is missing active range: {_spec_name(a[0])} ["
            + " ".join(f"{{{a[2 + 2 * i]} {u(a[3 + 2 * i])}}}" for i in range(a[1]))
            + "]"
        ),
        E.E_RANGE_NOT_IN_FLIGHT: lambda a: f"tried to end event {_spec_name(a[0])}, but not in-flight",
        E.E_RANGE_NO_G: lambda a: (
            f"encountered event of type {a[0]} without known state for current goroutine {a[1]}"
        ),
        E.E_RANGE_UNINIT_G: lambda a: f"uninitialized goroutine {a[0]} found during {ev(a[1])}",
        E.E_STACK_ID: lambda a: f"found invalid stack ID {u(a[0])} for event {_spec_name(a[1])}",
        E.E_STRING_ID_TABLE: lambda a: f"found invalid string ID {u(a[0])} for event {_spec_name(a[1])}",
        E.E_WIRE_TYPE: lambda a: f"found invalid event type: {a[0]}",
        E.E_WIRE_UNTIMED: lambda a: f"found event without a timestamp: type={a[0]}",
    }


def engine_error(code: int, params: Sequence[int], version: int, name: Callable[[int], str]) -> str:
    """The message of an engine error code; ``name`` maps a global string id to its text."""
    fixed = _CTX.get(code)
    if fixed is not None:
        return fixed
    fmt = _formatters(version, name).get(code)
    if fmt is None:
        return f"internal error: unknown engine error code {code}"
    return fmt([int(x) for x in params])


def failed_to_advance(gen: int, front, state) -> str:
    """Go's "failed to advance" message: the stuck frontier, then dumpOrdering."""
    lines = []
    for row in front.tolist():
        m, typ, time = row[0], row[1], row[2]
        s = spec.SPECS[typ]
        args = "".join(f" {name}={u(row[3 + i])}" for i, name in enumerate(s.args[1:5]))
        lines.append(f"M {m} [{s.name} time={time}{args}]\n")
    sc = state.sc
    dump = []
    for gid, st, seq, sgen in state.G[: int(sc[E.SC_GN]), : E.G_SGEN + 1].tolist():
        if st >= 0:
            dump.append(f"G {gid} [status={spec.go_status_name(st)} seq={u(seq)} (gen={sgen})]")
    dump.append("")
    for pid, st, seq, sgen in state.P[: int(sc[E.SC_PN]), : E.P_SGEN + 1].tolist():
        dump.append(f"P {pid} [status={spec.proc_status_name(st)} seq={u(seq)} (gen={sgen})]")
    dump.append("")
    for mid, g, p in state.M[: int(sc[E.SC_MN])].tolist():
        dump.append(f"M {mid} [g={g} p={p}]")
    dump.append("")
    dump.append(f"GC {u(sc[E.SC_GC_SEQ])} {_GC_STATE_NAMES[int(sc[E.SC_GC_STATE])]}")
    order_dump = "\n".join(dump) + "\n"
    return f"broken trace: failed to advance: frontier:\n[gen={gen}]\n\n{''.join(lines)}\n{order_dump}\n"
