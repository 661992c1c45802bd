"""What a simulation runs: goroutine templates of operations, the model's one input form.

Both the declarative workloads (workload.py) and the replay of a real trace
(replay.py) compile to a ``Program``; the engine knows nothing of either.

An operation is a tuple ``(code, a, b)``:

* ``CPU ns``        run on a P for ns of CPU (preemptible)
* ``BLOCK label``   wait until some G's WAKE names this template (a token, so a
                    wake that comes first is not lost) — replay's "who woke it"
* ``WAKE tmpl``     make template tmpl's goroutine runnable (or leave it a token)
* ``SPAWN tmpl n``  start n goroutines of template tmpl (go statement)
* ``SLEEP ns label``wait ns on a timer
* ``SYSCALL ns``    a blocking system call of ns (the P may be handed off)
* ``NET ns``        wait ns on the network poller
* ``SEND ch`` / ``RECV ch``  channel operations (buffered by the channel's capacity)
* ``LOCK mu`` / ``UNLOCK mu`` a mutex with FIFO hand-off to waiters
* ``YIELD busy``    runtime.Gosched: to the global queue, runnable; with busy=1
                    runtime.goschedIfBusy, which does so only while no P is idle
* ``STW i``         stop the world for ``stw[i]`` from here (the G goes on running on
                    its P, as the one that calls stopTheWorld does); replay's way to
                    keep a stop at its point of the program, not of the clock
* ``STALL ns``      the G's thread off its CPU for ns while it runs (model.osstalls, from
                    a kernel recording): the G holds its P and makes no progress, and
                    a preemption waits for the thread to run again
"""

from __future__ import annotations

from dataclasses import dataclass, field

CPU, BLOCK, WAKE, SPAWN, SLEEP, SYSCALL, NET, SEND, RECV, LOCK, UNLOCK, YIELD, STW, STALL = range(14)
OP_NAMES = (
    "cpu",
    "block",
    "wake",
    "spawn",
    "sleep",
    "syscall",
    "net",
    "send",
    "recv",
    "lock",
    "unlock",
    "yield",
    "stw",
    "stall",
)

Op = tuple[int, int, int]


@dataclass
class Program:
    templates: list[list[Op]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # template -> start function name
    roots: list[tuple[int, int]] = field(default_factory=list)  # (time ns, template) started from outside
    channels: list[int] = field(default_factory=list)  # capacity per channel
    mutexes: int = 0
    # (time ns, duration ns, reason); one that an STW op names happens there, not at its time
    stw: list[tuple[int, int, str]] = field(default_factory=list)
    # stop-the-world index -> the GOMAXPROCS it sets (runtime.GOMAXPROCS(n): procresize when the world starts)
    resize: dict[int, int] = field(default_factory=dict)
    labels: list[str] = field(default_factory=lambda: [""])  # string ids used by ops (block reasons)
    procs: int = 0  # GOMAXPROCS the program starts with (0: the caller's choice)
    # The CPUs of the machine it ran on (a capture's meta.json; 0: unknown, a CPU per thread).
    cpus: int = 0
    system: list[bool] = field(default_factory=list)  # template is a runtime goroutine
    # The traced machine's median findRunnable that found nothing (model.spinning; 0: not
    # measured): a replay spins as long as that machine did, unless Costs are given.
    find_idle_ns: int = 0
    # What waking a thread cost the traced machine's scheduler (model.wakecost; 0: not
    # measured): a replay's waking M pays that, unless Costs are given.
    waker_ns: int = 0
    # Each of those costs the trace measured (model.wakecost.costs_ns), which a replay draws from.
    waker_samples_ns: tuple[int, ...] = ()
    # The traced machine's thread wake-ups, each at the readying that began it (model.wakeups):
    # (template, index of the wait op the readying ended, -1 for the G's creation) -> ns from
    # that readying until the woken thread ran. A replay's wakep there waits as long.
    wake_ns: dict[tuple[int, int], int] = field(default_factory=dict)
    # The delays of wake_ns, in the order they began: the traced machine's distribution of
    # wake-ups for readied work, which a replay draws its other such wake-ups from.
    wake_samples_ns: tuple[int, ...] = ()
    # The traced machine's schedule() passes that found their G at hand (model.schedpass), in
    # ns: a replay draws each of its passes from them, unless Costs are given.
    schedule_samples_ns: tuple[int, ...] = ()
    # The traced machine's threads waiting for a CPU while holding a P with no G, each after
    # the op that ended the run of the G before it on that M (model.osstalls): (template,
    # index of the op after that one) -> ns the P's next schedule() waits.
    stall_after: dict[tuple[int, int], int] = field(default_factory=dict)
    # The timers the traced runtime ran in one timers.check (one findRunnable on one P: its
    # sleeps' unblocks with no G run between them), which expired together there (netpoll's
    # epoll_wait wakes on whole milliseconds): (template, index of the SLEEP op) -> group, and
    # each group's members in the trace's order. A replay's timers of one group expire at the
    # first one's expiry (model.replay, docs/model.md).
    timer_groups: dict[tuple[int, int], int] = field(default_factory=dict)
    timer_group_members: list[list[tuple[int, int]]] = field(default_factory=list)
    # The network waits one netpoll found ready together in the trace (one findRunnable on one
    # P: its network unblocks with no G run between them), the same way: (template, index of the
    # NET op) -> group, and each group's members. A replay's fds of one group become ready at the
    # first one's readiness (model.replay, docs/model.md).
    net_groups: dict[tuple[int, int], int] = field(default_factory=dict)
    net_group_members: list[list[tuple[int, int]]] = field(default_factory=list)

    def label(self, text: str) -> int:
        try:
            return self.labels.index(text)
        except ValueError:
            self.labels.append(text)
            return len(self.labels) - 1

    def add_template(self, name: str, ops: list[Op], system: bool = False) -> int:
        self.templates.append(ops)
        self.names.append(name)
        self.system.append(system)
        return len(self.templates) - 1
