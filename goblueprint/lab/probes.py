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
}


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
    return out, notes
