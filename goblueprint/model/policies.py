"""Scheduling policies: Go's rules at named extension points, and alternatives to them.

A policy is a set of overrides, one per extension point; ``resolve`` composes the
named ones over Go's own (``go``), so ``--policy fifo --policy steal-one`` changes
two points and leaves the rest as the runtime has them.

Extension points (the engine calls nothing else):

* ``enqueue``        where a readied or new G goes (runnext, local tail, overflow)
* ``next_local``     which local G runs next, and whether it inherits the time slice
* ``steal_order``    the order in which a thief visits victims
* ``steal_amount``   how many of a victim's N queued Gs are taken
* ``quantum``        how long a G may run before sysmon preempts it (ns)
* ``sysmon_tick``    sysmon's next sleep (µs) from its last one and its idle count
* ``may_spin``       whether one more M may spin looking for work

Each returns what it chose and a short reason, which the decision log keeps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from goblueprint.errors import UsageError

if TYPE_CHECKING:
    from goblueprint.model.engine import Sim

POINTS = ("enqueue", "next_local", "steal_order", "steal_amount", "quantum", "sysmon_tick", "may_spin")


def go_enqueue(sim: Sim, p: int, g: int, next_: bool) -> str:
    """runqput: a G made ready by a running G goes to runnext, kicking the old one to the tail."""
    if next_:
        old = sim.runnext[p]
        sim.runnext[p] = g
        if old < 0:
            return "runnext"
        g = old
    q = sim.runq[p]
    if len(q) < sim.c.runq_size:
        q.append(g)
        return "runnext, old runnext to tail" if next_ else "local tail"
    sim.runq_overflow(p, g)
    return "local queue full: half of it and the G to the global queue"


def fifo_enqueue(sim: Sim, p: int, g: int, next_: bool) -> str:
    """No runnext: every G goes to the tail (a woken G waits its turn)."""
    return go_enqueue(sim, p, g, False)


def go_next_local(sim: Sim, p: int) -> tuple[int, bool]:
    """runqget: runnext first (inheriting the time slice), then the head of the queue."""
    g = sim.runnext[p]
    if g >= 0:
        sim.runnext[p] = -1
        return g, sim.c.runnext_inherits_time
    q = sim.runq[p]
    if q:
        return q.popleft(), False
    return -1, False


def lifo_next_local(sim: Sim, p: int) -> tuple[int, bool]:
    """Newest first: runnext, then the tail of the queue."""
    g = sim.runnext[p]
    if g >= 0:
        sim.runnext[p] = -1
        return g, sim.c.runnext_inherits_time
    q = sim.runq[p]
    if q:
        return q.pop(), False
    return -1, False


def go_steal_order(sim: Sim, p: int) -> list[int]:
    """randomOrder: a random start and a stride coprime with GOMAXPROCS, so every P is visited once."""
    n = sim.procs
    coprimes = sim.coprimes
    i = sim.rng.getrandbits(32)
    pos, inc = i % n, coprimes[(i // n) % len(coprimes)]
    out = []
    for _ in range(n):
        out.append(pos)
        pos = (pos + inc) % n
    return out


def longest_first_order(sim: Sim, p: int) -> list[int]:
    """Victims with the most queued work first (ties by id): an omniscient thief."""
    return sorted(range(sim.procs), key=lambda v: (-(len(sim.runq[v]) + (sim.runnext[v] >= 0)), v))


def go_steal_amount(n: int) -> int:
    """runqgrab: half, rounded up (n - n/2)."""
    return n - n // 2


def steal_one(n: int) -> int:
    return min(1, n)


def go_quantum(sim: Sim) -> int:
    return sim.c.forcePreemptNS


def go_sysmon_tick(sim: Sim, delay_us: int, idle: int) -> int:
    """sysmon: 20 µs while it finds work, doubling after 50 idle ticks, at most 10 ms."""
    c = sim.c
    if idle == 0:
        delay_us = c.sysmon_min_sleep_us
    elif idle > c.sysmon_idle_ticks:
        delay_us *= 2
    return min(delay_us, c.sysmon_max_sleep_us)


def fixed_sysmon_tick(sim: Sim, delay_us: int, idle: int) -> int:
    """A constant sysmon tick (the minimum sleep), never backing off."""
    return sim.c.sysmon_min_sleep_us


def go_may_spin(sim: Sim) -> bool:
    """findRunnable: spin only while FACTOR·nmspinning < gomaxprocs − npidle."""
    return sim.c.spinning_factor * sim.nmspinning < sim.procs - sim.npidle


def always_spin(sim: Sim) -> bool:
    return True


@dataclass(frozen=True)
class Policy:
    names: tuple[str, ...]
    enqueue: Callable[[Sim, int, int, bool], str] = go_enqueue
    next_local: Callable[[Sim, int], tuple[int, bool]] = go_next_local
    steal_order: Callable[[Sim, int], list[int]] = go_steal_order
    steal_amount: Callable[[int], int] = go_steal_amount
    quantum: Callable[[Sim], int] = go_quantum
    sysmon_tick: Callable[[Sim, int, int], int] = go_sysmon_tick
    may_spin: Callable[[Sim], bool] = go_may_spin


# name -> (what it does, {extension point: implementation})
REGISTRY: dict[str, tuple[str, dict[str, Callable]]] = {
    "go": ("the runtime's own rules (the default)", {}),
    "fifo": ("no runnext: readied Gs go to the tail of the local queue", {"enqueue": fifo_enqueue}),
    "lifo": ("take the newest local G first", {"next_local": lifo_next_local}),
    "steal-one": ("a thief takes one G instead of half", {"steal_amount": steal_one}),
    "steal-longest": ("a thief visits the longest queues first", {"steal_order": longest_first_order}),
    "quantum-1ms": ("sysmon preempts after 1 ms", {"quantum": lambda sim: 1_000_000}),
    "quantum-50ms": ("sysmon preempts after 50 ms", {"quantum": lambda sim: 50_000_000}),
    "sysmon-fixed": ("sysmon never backs off its tick", {"sysmon_tick": fixed_sysmon_tick}),
    "spin-all": ("no spinning-M limit", {"may_spin": always_spin}),
}


def resolve(names: list[str] | tuple[str, ...]) -> Policy:
    """The policy made of NAMES' overrides over Go's (later names win on the same point)."""
    chosen: dict[str, Callable] = {}
    for name in names:
        if name not in REGISTRY:
            raise UsageError(f"unknown policy {name!r} (known: {', '.join(REGISTRY)})")
        chosen.update(REGISTRY[name][1])
    return Policy(names=tuple(names) or ("go",), **chosen)


def coprimes(n: int) -> list[int]:
    return [i for i in range(1, n + 1) if math.gcd(i, n) == 1]
