"""Protocol knowledge about the runtime's status words, kept as data in one place."""

from __future__ import annotations

from dataclasses import dataclass

PACKAGE = "runtime"
GOOS = "linux"
GOARCH = "amd64"


@dataclass(frozen=True)
class Machine:
    name: str  # "g" or "p"
    field: str  # the status field as Type.field, as the helper names it
    anchor: str  # first constant of the const block that declares the states
    prefix: str  # every state constant starts with this
    # Calls of functions that always perform a P transition are transitions too.
    indirect: bool
    # The status every object of the machine has while the world is stopped (P: _Pgcstop), or None.
    world_stopped: str | None = None


MACHINES: dict[str, Machine] = {
    "g": Machine("g", "g.atomicstatus", "_Gidle", "_G", indirect=False),
    "p": Machine("p", "p.status", "_Pidle", "_P", indirect=True, world_stopped="_Pgcstop"),
}

STATUS_FIELDS = tuple(m.field for m in MACHINES.values())

# How a write through a call or method reads: which operands are (old, new).
# "cas": ops are (old, new); "store": ops are (new,).  Reads (Load) are absent.
WRITE_CALLS: dict[str, str] = {
    "atomic.Cas": "cas",
    "atomic.Store": "store",
    "atomic.StoreRel": "store",
    "atomic.CasRel": "cas",
    "atomic.Xchg": "store",
}
WRITE_METHODS: dict[str, str] = {
    "CompareAndSwap": "cas",
    "Store": "store",
    "StoreRelease": "store",
    "Swap": "store",
}

# Texts that read a status field, so a guard on any of them states the prior status of a store
# to it: {subj} is the field expression (pp.status), {obj} the object (pp).
STATUS_READS: tuple[str, ...] = (
    "{subj}",
    "{subj}.Load()",
    "atomic.Load(&{subj})",
    "atomic.LoadAcq(&{subj})",
    "readgstatus({obj})",
)

# A function that calls one of these as a top-level statement runs only with the world stopped.
WORLD_STOPPED_ASSERTIONS = ("assertWorldStopped",)

# Closures passed to these run on another stack; sites inside them carry the name as context.
CONTEXTS = ("systemstack", "mcall")

# Files whose functions count as "scheduler functions" when `source diff` lists added, removed and renamed ones.
SCHED_FILES = (
    "proc.go",
    "runtime2.go",
    "preempt.go",
    "stack.go",
    "mgc.go",
    "chan.go",
    "select.go",
    "sema.go",
)
