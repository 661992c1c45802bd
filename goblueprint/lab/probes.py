"""Probes: calls of the lab's runtime file added to scheduler functions.

Each probe names a function, where in it the call goes (on entry, deferred to
its return, or just before/after its first call of another function) and the
call. The Go helper places it through the AST and checks that every name the
call uses is in scope there; a probe whose function, anchor or names this
release lacks is reported as not instrumented. Where releases differ, the
choice is made from the source facts (a parameter, a struct field), never from
the version number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Probe:
    kind: str
    func: str
    call: str  # with {site} for the site id
    defer: bool = False
    before: str = ""
    after: str = ""
    returning: str = ""


# What each kind's record columns mean (obj, a, b, c); docs/lab.md repeats this.
COLUMNS: dict[str, tuple[str, str, str, str]] = {
    "runq_put": ("P", "goid", "runnext (0/1)", "local queue length after"),
    "runq_get": ("P", "goid", "inheritTime (0/1)", "local queue length after"),
    "runq_overflow": ("P", "goroutines moved to the global queue", "", ""),
    "runq_grab": ("victim P", "goroutines taken from its queue", "its queue length at the grab", ""),
    "steal": ("victim P", "goroutines taken", "victim queue length after", "thief P"),
    "glob_put": ("", "goroutines put", "global queue length before", ""),
    "glob_get": ("", "goroutines taken", "global queue length after", ""),
    "sysmon_wake": ("", "delay slept (µs)", "idle ticks", ""),
    "sysmon_preempt": ("P", "ns its G has run", "when sysmon first saw it (0: never)", ""),
    "sysmon_retake": ("P", "ns in its syscall", "when sysmon first saw it (0: never)", ""),
    "netpoll_ready": ("goid", "goroutines in the batch", "netpoll's delay (ns, -1 blocks)", ""),
    "timer_run": ("", "ns late", "", ""),
    "stw_begin": ("", "stwReason", "", ""),
    "stw_end": ("", "", "", ""),
    "handoffp": ("P", "", "", ""),
    "startm": ("P (-1: none)", "spinning (0/1)", "", ""),
    "stopm": ("", "", "", ""),
    "wakep": ("", "", "", ""),
    "spin_start": ("", "", "", ""),
    "spin_stop": ("", "", "", ""),
}

# Probes on function entry that record no values: (kind, function).
_MARKS = (("stw_end", "startTheWorldWithSema"), ("stopm", "stopm"), ("wakep", "wakep"),
          ("spin_start", "(*m).becomeSpinning"), ("spin_stop", "resetspinning"))  # fmt: skip


def _struct_fields(facts: dict[str, Any], name: str) -> set[str]:
    for s in facts["structs"]:
        if s["name"] == name:
            return {f["name"] for f in s["fields"]}
    return set()


def global_queue_size(facts: dict[str, Any]) -> str | None:
    """The expression of the global run queue's length in this release."""
    if "runqsize" in _struct_fields(facts, "schedt"):
        return "sched.runqsize"
    if "size" in _struct_fields(facts, "gQueue"):
        return "sched.runq.size"
    return None


def probes(facts: dict[str, Any]) -> tuple[list[Probe], list[str]]:
    """The probes this release can take, and notes on what it cannot."""
    params = {f["name"]: f["params"] for f in facts["funcs"] if f["body"]}
    notes: list[str] = []
    out = [
        Probe("runq_put", "runqput", "goblueprintLabRunqPut({site}, pp, gp, next)", defer=True),
        Probe("runq_get", "runqget", "goblueprintLabRunqGet({site}, pp, &gp, &inheritTime)", defer=True),
        Probe(
            "runq_overflow",
            "runqputslow",
            "goblueprintLabEvent({site}, uint64(pp.id), uint64(n+1), 0, 0)",
            before="globrunqputbatch",
        ),
        # The numbers runqgrab decided on (its own loads of head and tail), when it takes
        # from the queue; taking runnext returns the constant 1 and is not this probe.
        Probe(
            "runq_grab",
            "runqgrab",
            "goblueprintLabEvent({site}, uint64(pp.id), uint64(n), uint64(t-h), 0)",
            returning="n",
        ),
        Probe(
            "steal",
            "runqsteal",
            "goblueprintLabEvent({site}, uint64(p2.id), uint64(n), goblueprintLabRunqLen(p2), uint64(pp.id))",
            after="runqgrab",
        ),
    ]
    size = global_queue_size(facts)
    if size is None:
        notes.append(
            "the global run queue has neither sched.runqsize nor a sized gQueue: no global queue probes"
        )
    else:
        for func in ("globrunqput", "globrunqputhead"):
            out.append(Probe("glob_put", func, f"goblueprintLabEvent({{site}}, 0, 1, uint64({size}), 0)"))
        batch = params.get("globrunqputbatch", [])
        count = "n" if "n" in batch else "batch.size" if "size" in _struct_fields(facts, "gQueue") else None
        if count is None:
            notes.append("globrunqputbatch: no batch size to read")
        else:
            out.append(
                Probe(
                    "glob_put",
                    "globrunqputbatch",
                    f"goblueprintLabEvent({{site}}, 0, uint64({count}), uint64({size}), 0)",
                )
            )
        for func in ("globrunqget", "globrunqgetbatch"):
            if func in params:
                out.append(Probe("glob_get", func, f"goblueprintLabGlobGet({{site}}, {size})", defer=True))
    out += [
        Probe("sysmon_wake", "sysmon", "goblueprintLabEvent({site}, 0, uint64(delay), uint64(idle), 0)",
              after="usleep"),
        Probe("sysmon_preempt", "retake", "goblueprintLabEvent({site}, uint64(pp.id), uint64(now-pd.schedwhen), uint64(pd.schedwhen), 0)",
              before="preemptone"),
        Probe("sysmon_retake", "retake",
              "goblueprintLabEvent({site}, uint64(pp.id), uint64(now-pd.syscallwhen), uint64(pd.syscallwhen), 0)", before="handoffp"),
        Probe("netpoll_ready", "netpoll", "goblueprintLabGList({site}, &toRun, delay)", returning="toRun"),
        Probe("stw_begin", "stopTheWorldWithSema", "goblueprintLabEvent({site}, 0, uint64(reason), 0, 0)"),
        Probe("handoffp", "handoffp", "goblueprintLabEvent({site}, uint64(pp.id), 0, 0, 0)"),
        Probe("startm", "startm",
              "goblueprintLabEvent({site}, goblueprintLabPid(pp), goblueprintLabBool(spinning), 0, 0)"),
    ]  # fmt: skip
    out += [Probe(kind, func, "goblueprintLabEvent({site}, 0, 0, 0, 0)") for kind, func in _MARKS]
    # Timers: Go 1.22 runs one with runOneTimer(pp, t, now); from 1.23, (*timer).unlockAndRun(now).
    runner = next((f for f in ("(*timer).unlockAndRun", "runOneTimer") if f in params), None)
    if runner is None:
        notes.append("no timer runner (runOneTimer or (*timer).unlockAndRun): no timer records")
    else:
        out.append(Probe("timer_run", runner, "goblueprintLabEvent({site}, 0, uint64(now-t.when), 0, 0)"))
    return out, notes
