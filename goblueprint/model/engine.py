"""The discrete-event model of Go's scheduler (runtime/proc.go), one rule per method.

Time advances from event to event (a heap of (time, seq, kind, a, b)); the seq
number makes ties deterministic, and the only randomness is ``self.rng``
(seeded), so a seed gives the same run byte for byte.

Modelled as the source has it: per-P local queues of ``runq_size`` plus runnext;
the global queue checked first every ``global_queue_tick`` schedticks and taken
in batches of min(runq_size/2, n, n/gomaxprocs+1); overflow of a full local
queue (half of it plus the new G to the global queue); findRunnable's order
(local, global, netpoll, steal); stealWork's random start and coprime stride,
``steal_tries`` rounds, half of a victim (n − n/2), runnext only in the last
round and from a running victim only after runqgrab's sleep (usleep(3) plus the
OS's timer slack) and its CAS, each round and sleep taking its time while the M
holds its P and counts as spinning, then
the global queue once more before the P goes; the spinning limit; wakep (also at the end
of goschedImpl); sysmon's sleep (min doubling to max after
idle ticks, each plus the OS's timer slack, as is its wait while every P is idle),
its preemption of a G that kept one schedtick for forcePreemptNS, its retake of Ps from syscalls (after one tick of observation, or at once when
there is work and nobody to do it) and its network poll; handoffp; exitsyscall and
Go 1.27's exitsyscallTryGetP; timers on the P the G slept on, run by the M parked in
netpoll (one M polls at a time: timers expiring before it runs run on its P), the
owner's findRunnable or a thief's last steal round; the G a blocking netpoll returns run
before the timers that expired meanwhile; sched.needspinning; injectglist; netpoll's list (the last
ready G at its head) and its one poller (sched.lastpoll: nobody else polls while the M
woken from netpoll has not run, and that M takes every G ready by then); the blocking
netpoll of an M giving its P up;
stop-the-world by the G that stops it (its preemptall's stops "preempted", as traced), and
procresize when it changes GOMAXPROCS; GC's forEachP before and after a mark termination
stop (preemptall, again every 100 µs until every P has run its function); the
futex wake a thread wake-up costs the scheduler's M that makes it, before it runs its G.

Simplified (see docs/model.md): an M is a thread id that follows its P; every thread
wake-up costs the same (unless Costs gives samples to draw from), except where a replayed
trace measured one at the same readying (Program.wake_ns); the machine's costs are
calibrated, not read, except a replay's steal round (model.spinning), its waker's cost
(model.wakecost) and those wake-ups (model.wakeups). The machine's CPUs, where known
(Program.cpus, a capture's meta.json, or --cpus), as a rule of the machine, not of proc.go:
a woken M waits while every CPU runs an M, until one leaves its CPU or the OS's slice runs
it anyway (cpu_wait); a running thread is never taken off its CPU by the model, and sysmon
and Ms in syscalls are not counted. Without them a thread the model runs always has one,
except where a replay with a kernel recording says the traced thread had none
(model.osstalls: STALL ops, Program.stall_after). Not as proc.go has it: the M woken from
netpoll runs every timer that expired while it was on its way, whoever's heap it is on
(timers.check runs its own P's only); the source's rule, tried, moved the replays' figures
away from the real ones, likely as epoll_wait's 1 ms resolution is not modelled (docs/model.md).
"""

from __future__ import annotations

import heapq
import random
import statistics
from collections import deque

from goblueprint.model import program as ops
from goblueprint.model import spinning
from goblueprint.model.constants import Constants, Costs
from goblueprint.model.policies import Policy, coprimes
from goblueprint.model.program import Program
from goblueprint.model.record import (
    F_CREATE,
    F_REQUEUE,
    F_SYSCALL_EXIT,
    F_WAKEUP,
    G_RUN,
    G_RUNNABLE,
    G_SYS,
    G_WAIT,
    M_IDLE,
    M_RUN,
    M_SYS,
    P_IDLE,
    P_RUN,
    P_STOP,
    Recorder,
)
from goblueprint.timeline.model import LaneKind, State

LG, LP, LM, LSTW = int(LaneKind.G), int(LaneKind.P), int(LaneKind.M), int(LaneKind.STW)

# Event kinds
(EV_SCHED, EV_CPU, EV_WAKE_TIMER, EV_NET, EV_SYSCALL, EV_SYSMON, EV_ROOT, EV_STW, EV_STW_END, EV_TRACE,
 EV_POLLED, EV_TIMER_RUN, EV_SAFEPOINT) = range(13)  # fmt: skip
# P status (as runtime2.go's _Pidle, _Prunning, _Psyscall, _Pgcstop, _Pdead)
PS_IDLE, PS_RUN, PS_SYSCALL, PS_STOP, PS_DEAD = range(5)
# G status
GS_RUNNABLE, GS_RUNNING, GS_WAITING, GS_SYSCALL, GS_DEAD = range(5)


def _release(version: str) -> tuple[int, int]:
    """(major, minor) of "1.22.10"; an empty or unreadable version is the newest."""
    parts = version.removeprefix("go").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (1 << 30, 0)


# Who asked to preempt a G whose thread is off its CPU (Sim.gpreempt): sysmon's retake, or GC's
# preemptall (forEachP); only sysmon's count in Sim.preemptions.
_BY_SYSMON, _BY_GC = 1, 2

# The stop-the-world reason gcMarkDone gives (stwGCMarkTerm): forEachP comes before it and after it.
_MARK_TERMINATION = "GC mark termination"

T_START = 1_000_000  # simulated clock origin (non-zero so "0" is never mistaken for "none")
SPINNING = -2  # find_runnable: no G yet, a steal round is under way (the M holds its P and spins)
GRAB_WAIT = -3  # steal_once: the M sleeps in runqgrab before taking a running victim's runnext
# The fewest thread wake-ups a trace must have measured for a replay to draw its unmatched ones
# from them: below this a handful (one long one, say) would stand for the whole machine.
MIN_DRAWN_WAKEUPS = 30
# Likewise the fewest schedule() passes found at hand (model.schedpass) a replay draws its own from.
MIN_DRAWN_PASSES = 30
# And the fewest costs of a waking scheduler (model.wakecost.costs_ns).
MIN_DRAWN_WAKER_COSTS = 30


def _draw(rng: random.Random, samples: tuple[int, ...], otherwise: int) -> int:
    """One of a trace's measured SAMPLES, drawn from RNG's stream; OTHERWISE where there are none."""
    return samples[rng.randrange(len(samples))] if samples else otherwise


class Sim:
    def __init__(
        self,
        prog: Program,
        consts: Constants,
        policy: Policy,
        procs: int,
        seed: int,
        *,
        costs: Costs | None = None,
        decisions: bool = True,
        schedtrace_ms: int = 0,
        horizon_ns: int = 0,
        cpus: int | None = None,
    ) -> None:
        self.prog = prog
        self.c = consts
        self.k = costs or Costs()
        # Its schedule() passes after a G stops (model.schedpass): the traced machine's, drawn,
        # unless costs are given; the constant where it measured too few.
        self.pass_draw: tuple[int, ...] = ()
        if costs is None and len(prog.schedule_samples_ns) >= MIN_DRAWN_PASSES:
            self.pass_draw = prog.schedule_samples_ns
        # The pass a fruitless findRunnable makes before it spins (its median, when drawn).
        pass_ns = int(statistics.median_low(self.pass_draw)) if self.pass_draw else self.k.schedule_ns
        # And one stealWork round: the replayed trace's machine's (model.spinning) unless costs are given.
        self.steal_ns = self.k.steal_ns
        if costs is None and prog.find_idle_ns:
            self.steal_ns = spinning.round_ns(prog.find_idle_ns, pass_ns, consts.steal_tries)
        # And an M refused a spin: its fruitless findRunnable as long (the trace's median does not
        # tell the two apart); none where costs are given.
        self.drop_ns = 0
        if costs is None and prog.find_idle_ns:
            self.drop_ns = max(0, prog.find_idle_ns - pass_ns)
        # What waking a thread costs the M that does it from the scheduler: likewise the replayed
        # trace's (model.wakecost) unless costs are given.
        self.waker_ns = prog.waker_ns if costs is None and prog.waker_ns else self.k.waker_ns
        # Each such cost drawn from those it measured, where it measured enough: the median alone
        # made every timer's G wait exactly as long (docs/model.md, "Where the p99 is still short").
        self.waker_draw: tuple[int, ...] = ()
        if costs is None and prog.waker_ns and len(prog.waker_samples_ns) >= MIN_DRAWN_WAKER_COSTS:
            self.waker_draw = prog.waker_samples_ns
        # And its thread wake-ups where it measured them (model.wakeups), unless costs are given;
        # the others drawn from all it measured, when it measured enough of them to stand for
        # its machine (docs/model.md, "A goroutine that yields in a loop").
        self.wake_ns = prog.wake_ns if costs is None else {}
        self.wake_draw = ()
        if costs is None and len(prog.wake_samples_ns) >= MIN_DRAWN_WAKEUPS:
            self.wake_draw = prog.wake_samples_ns
        self.pol = policy
        # goschedImpl keeps a G preempted for a stop-the-world on its P's runnext from Go 1.26
        # (`if preempted && sched.gcwaiting.Load()`); 1.22-1.25 put it on the global queue like
        # any other. Constants without a release (a test's own) follow the bundled source.
        self.stw_runnext = _release(consts.go_version) >= (1, 26)
        self.procs = procs  # GOMAXPROCS now (procresize changes it); Ps from it up to nalloc are dead
        nalloc = max([procs, *prog.resize.values()])
        self.rng = random.Random(seed)
        # Its own stream, so drawing wake-ups leaves the steal orders and sysmon's phase as they were.
        self.wake_rng = random.Random(f"{seed}:wake-up")
        self.pass_rng = random.Random(f"{seed}:schedule")
        self.waker_rng = random.Random(f"{seed}:waker")
        self.coprimes = coprimes(procs)
        self.rec = Recorder(decisions)
        self.now = T_START
        self.heap: list[tuple[int, int, int, int, int]] = []
        self.seq = 0
        self.horizon = horizon_ns
        # Ps
        self.runq: list[deque[int]] = [deque() for _ in range(nalloc)]
        self.runnext = [-1] * nalloc
        self.pstatus = [PS_IDLE] * procs + [PS_DEAD] * (nalloc - procs)
        self.pg = [-1] * nalloc  # G running (or in syscall) on the P
        self.pm = [-1] * nalloc
        self.pepoch = [0] * nalloc  # invalidates a pending EV_SCHED when the P is taken away
        self.schedtick = [0] * nalloc
        self.syscalltick = [0] * nalloc
        self.spinning = [False] * nalloc
        self.spinround = [0] * nalloc  # the stealWork round the P's M is in, from 1 (0: not stealing)
        # stealWork's inheritTime for the G its round just returned: runqget's, for a G readied by
        # the timers it stole (it runs from runnext); false for a G taken by runqsteal.
        self.steal_inherit = False
        self.dropping = [False] * nalloc  # the P's M, refused a spin, is on its way to give the P up
        # runqgrab's sleep under way on the P's M: (victim, the runnext it saw, steal order, index).
        self.grab: list[tuple[int, int, list[int], int] | None] = [None] * nalloc
        # How long that sleep really lasts: usleep(3) plus the OS's timer slack (Costs).
        self.grab_wait_ns = consts.runnext_steal_wait_ns + self.k.timer_slack_ns
        self.pd_schedtick = [0] * nalloc
        self.pd_schedwhen = [0] * nalloc
        self.pd_syscalltick = [0] * nalloc
        self.pd_syscallwhen = [0] * nalloc
        self.ptimers: list[list[int]] = [[] for _ in range(nalloc)]
        self.pwaking = [
            False
        ] * nalloc  # an M was woken for the P and has not run yet  # expired sleeps the P has yet to run
        # The thread wake-ups the P's M made from the scheduler since it last ran a G (ns it owes),
        # and the G it chose meanwhile, held until it has paid them (-1: none).
        self.owed = [0] * nalloc
        self.held = [-1] * nalloc
        self.held_inherit = [False] * nalloc
        # The machine's CPUs (0: a CPU for every thread): a woken M runs only when fewer Ms
        # than that are on one, or after the OS's slice (cpu_wait); the prog's unless given.
        self.cpus = prog.cpus if cpus is None else cpus
        self.cpuwait = [False] * nalloc  # the P's woken M is runnable and waits for a CPU
        self.polled_on = [False] * nalloc  # the P's woken M ran netpoll already (it has a CPU)
        self.cpu_waiters: deque[int] = deque()  # those Ps, in the order their Ms began to wait
        self.pidle: list[int] = []  # a stack, like sched.pidle
        self.npidle = 0
        self.nmspinning = 0
        # sched.needspinning: a wakep found no idle P (pidlegetSpinning); the next M about to
        # drop its P without spinning spins instead (findRunnable's "delicate dance").
        self.needspinning = False
        self.globq: deque[int] = deque()
        # Ms
        self.mcount = 0
        self.midle: list[int] = []
        # Gs (lists indexed by G id; G ids start at 1 like Go's)
        self.gtmpl = [-1]
        self.gpc = [0]
        self.grem = [-1]
        self.gstatus = [GS_DEAD]
        self.gp = [-1]  # P the G last ran on
        self.gm = [-1]
        self.grun_start = [0]
        self.ggen = [0]
        self.gflow = [-1]  # pending flow row, ended when the G next runs
        self.gtoken_wait = [False]
        self.gtimerp = [-1]  # P whose timer heap holds the G's sleep (the P it slept on)
        # The G's sleep: its generation (an EV_WAKE_TIMER of an older one is stale: the timer ran
        # already, with the group of timers one timers.check ran in the trace) and whether its
        # timer is still to expire.
        self.gtimer_gen = [0]
        self.gtimer_pending = [False]
        self.gtimer_when = [0]  # when the pending sleep's timer expires
        # The G's network wait, the same way (a group of fds one netpoll found ready in the trace).
        self.gnet_gen = [0]
        self.gnet_pending = [False]
        self.gnet_when = [0]
        # sysmon asked to preempt the G while its thread was off its CPU (a STALL op): the
        # signal is handled, and the G stops, when the thread runs again (the stall's end).
        self.gpreempt = [0]  # who asked: _BY_SYSMON or _BY_GC (0: nobody)
        self.ginst: dict[int, int] = {}  # template -> its G (replay templates run once)
        self.tokens = [0] * len(prog.templates)
        self.chan_buf = [0] * len(prog.channels)
        self.chan_recvq: list[deque[int]] = [deque() for _ in prog.channels]
        self.chan_sendq: list[deque[int]] = [deque() for _ in prog.channels]
        self.mu_locked = [False] * prog.mutexes
        self.mu_waiters: list[deque[int]] = [deque() for _ in range(prog.mutexes)]
        self.netready: list[int] = []
        # The M that was blocked in netpoll, woken and not yet run: the P it takes (-1: none)
        # and the Gs whose timers expired meanwhile, which it runs when it runs.
        self.poller = -1
        self.poller_epoch = 0  # its P's pepoch when it was woken (a stop may take that P before it runs)
        self.poller_timers: list[int] = []
        self.lastpoll = T_START
        self.netwaiters = 0
        # sysmon
        self.sysmon_delay = consts.sysmon_min_sleep_us
        self.sysmon_idle = 0
        self.sysmon_parked = False  # in sysmonwait: every P idle (or the world stopped)
        self.sysmon_epoch = 0  # a wake-up makes the pending timed one stale
        self.stw_active = False
        self.stw_keeper = -1  # the P whose G stopped the world (it goes on running)
        self.stw_waiting: deque[tuple[int, int]] = deque()  # stops asked for during one (worldsema)
        self.stw_caller = -1  # the G that stopped the world (-1: none of the program's)
        # forEachP under way: the Ps yet to run its safe-point function, and the G that called it.
        self.safepoint_wait: set[int] = set()
        self.safepoint_caller = -1
        self.safepoint_epoch = 0
        # counters (the lab's metric names)
        self.preemptions = 0
        self.steals = 0
        self.sysmon_wakeups = 0
        self.retakes = 0
        self.live = 0
        self.created = 0
        self.last_exit = 0
        self.schedtrace_ms = schedtrace_ms
        self.schedtrace: list[str] = []
        self.label_ids = [self.rec.sid(t) for t in prog.labels]
        for p in range(procs):
            self.pidle.append(procs - 1 - p)  # P0 on top, like procresize leaves it
            self.npidle += 1
            self.rec.state(LP, p, self.now, P_IDLE)

    # ---- event loop -------------------------------------------------------------------------

    def push(self, t: int, kind: int, a: int = 0, b: int = 0) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, kind, a, b))

    def run(self, check_every: int = 0) -> None:
        """Run to the end; with CHECK_EVERY, check the invariants after every that many events."""
        for t, tmpl in self.prog.roots:
            self.push(T_START + t, EV_ROOT, tmpl)
        anchored = {a for tmpl in self.prog.templates for code, a, _ in tmpl if code == ops.STW}
        for i, (t, _, _) in enumerate(self.prog.stw):
            if i not in anchored:  # a stop no G of the program made happens at its time
                self.push(T_START + t, EV_STW, i)
        # sysmon's phase against the program is not in a trace (it started with the process):
        # the seed chooses it, so averaging over seeds averages over it.
        phase = self.rng.randrange(self.c.sysmon_max_sleep_us * 1000)
        self.push(self.now + self.sysmon_sleep_ns(self.c.sysmon_min_sleep_us) + phase, EV_SYSMON, 0, 0)
        if self.schedtrace_ms:
            self.push(self.now + self.schedtrace_ms * 1_000_000, EV_TRACE)
        heap = self.heap
        pop = heapq.heappop
        events = 0
        while heap:
            if check_every:
                events += 1
                if events % check_every == 0:
                    self.check_invariants()
            t, _, kind, a, b = pop(heap)
            if self.horizon and t > T_START + self.horizon:
                break
            self.now = t
            if kind == EV_SCHED:
                if self.pepoch[a] == b:
                    self.schedule(a)
            elif kind == EV_CPU:
                if self.ggen[a] == b:
                    self.grem[a] = -1
                    self.gpc[a] += 1
                    if self.gpreempt[a]:
                        who, self.gpreempt[a] = self.gpreempt[a], 0
                        if who == _BY_SYSMON:
                            self.preempt_now(a, self.gp[a], self.pol.quantum(self))
                        else:
                            self.gc_preempt(a, self.gp[a], "forEachP, when the thread ran again")
                    else:
                        self.step(a)
            elif kind == EV_SYSMON:
                if a != self.sysmon_epoch or (self.live == 0 and not self.pending_roots()):
                    continue  # woken earlier meanwhile, or nothing left to watch: the program is over
                self.sysmon(bool(b))
            elif kind == EV_WAKE_TIMER:
                if self.gtimer_gen[a] == b:
                    self.timer_fired(a)
            elif kind == EV_NET:
                if self.gnet_gen[a] == b:
                    self.net_fired(a)
            elif kind == EV_TIMER_RUN:
                self.polled(-1, b)
            elif kind == EV_POLLED:
                self.polled(a, b)
            elif kind == EV_SYSCALL:
                if self.ggen[a] == b:
                    self.exitsyscall(a)
            elif kind == EV_ROOT:
                self.root(a)
            elif kind == EV_STW:
                if self.live or self.pending_roots():
                    self.stop_the_world(a, -1)
            elif kind == EV_STW_END:
                self.start_the_world(a)
            elif kind == EV_SAFEPOINT:
                if a == self.safepoint_epoch:
                    self.safepoint_tick()
            elif kind == EV_TRACE:
                self.schedtrace_line()
                if self.live or self.pending_roots():
                    self.push(self.now + self.schedtrace_ms * 1_000_000, EV_TRACE)
        # The run ends with its last goroutine (later timer ticks of sysmon are not the program's).
        self.end = self.last_exit if self.live == 0 and self.last_exit else self.now

    def pending_roots(self) -> bool:
        # Stop-the-world events alone do not keep a finished program alive.
        return any(
            k in (EV_ROOT, EV_WAKE_TIMER, EV_NET, EV_SYSCALL, EV_POLLED, EV_TIMER_RUN)
            for _, _, k, _, _ in self.heap
        )

    # ---- goroutines -------------------------------------------------------------------------

    def new_g(self, tmpl: int) -> int:
        g = len(self.gtmpl)
        for col, v in ((self.gtmpl, tmpl), (self.gpc, 0), (self.grem, -1), (self.gstatus, GS_RUNNABLE),
                       (self.gp, -1), (self.gm, -1), (self.grun_start, 0), (self.ggen, 0), (self.gflow, -1),
                       (self.gtoken_wait, False), (self.gtimerp, -1), (self.gpreempt, 0), (self.gtimer_gen, 0),
                       (self.gtimer_pending, False), (self.gtimer_when, 0), (self.gnet_gen, 0),
                       (self.gnet_pending, False), (self.gnet_when, 0)):  # fmt: skip
            col.append(v)
        self.ginst.setdefault(tmpl, g)
        self.live += 1
        self.created += 1
        self.rec.g_names[g] = (self.prog.names[tmpl], self.prog.system[tmpl] if self.prog.system else False)
        return g

    def root(self, tmpl: int) -> None:
        """A goroutine started from outside the program's Gs (main, or one the trace had at its start)."""
        g = self.new_g(tmpl)
        self.rec.state(LG, g, self.now, G_RUNNABLE)
        # No creation flow: no G of the program made it, and a real trace has none for the Gs
        # it starts with either (every CREATE there has a parent G). One would add a sample of
        # the model's wake-up cost per root to the latency percentiles of the model's side only:
        # on a lab program of 19 flows, 5 roots took the p50 from a preemption's wait to ~8 µs.
        self.globrunqput(g)
        self.wakep_for_global()

    def step(self, g: int) -> None:
        """Run G's operations from its pc until one takes time or blocks."""
        tmpl = self.prog.templates[self.gtmpl[g]]
        p = self.gp[g]
        while True:
            pc = self.gpc[g]
            if pc >= len(tmpl):
                self.goexit(g)
                return
            code, a, b = tmpl[pc]
            if code == ops.CPU or code == ops.STALL:
                # A stall runs out like CPU (the G holds its P, running), but makes no progress
                # and a preemption waits for its end (preemptone).
                rem = self.grem[g] if self.grem[g] >= 0 else a
                self.grem[g] = rem
                self.grun_start[g] = self.now
                self.push(self.now + rem, EV_CPU, g, self.ggen[g])
                return
            self.gpc[g] = pc + 1
            if code == ops.SPAWN:
                for _ in range(max(1, b)):
                    self.newproc(g, p, a)
            elif code == ops.WAKE:
                target = self.ginst.get(a, -1)
                if target >= 0 and self.gtoken_wait[target]:
                    self.gtoken_wait[target] = False
                    self.ready(target, g, p, self.unblock_label(target))
                else:
                    self.tokens[a] += 1
            elif code == ops.BLOCK:
                t = self.gtmpl[g]
                if self.tokens[t] > 0:
                    self.tokens[t] -= 1
                else:
                    self.gtoken_wait[g] = True
                    self.park(g, self.label_ids[a])
                    return
            elif code == ops.SLEEP:
                self.park(g, self.label_ids[b] if b else self.rec.sid("sleep"))
                self.gtimerp[g] = p  # time.Sleep's timer goes on the current P's heap (maybeAdd)
                self.gtimer_gen[g] += 1
                self.gtimer_pending[g] = True
                self.gtimer_when[g] = self.now + a
                self.push(self.now + a, EV_WAKE_TIMER, g, self.gtimer_gen[g])
                return
            elif code == ops.NET:
                self.park(g, self.rec.sid("network"))
                self.netwaiters += 1
                self.gnet_gen[g] += 1
                self.gnet_pending[g] = True
                self.gnet_when[g] = self.now + a
                self.push(self.now + a, EV_NET, g, self.gnet_gen[g])
                return
            elif code == ops.SYSCALL:
                self.entersyscall(g, a)
                return
            elif code == ops.STW:
                self.stop_the_world(a, p)
            elif code == ops.YIELD:
                if a and self.npidle:
                    continue  # goschedIfBusy: a P is idle, so the G goes on (no preempt flag here)
                woke = self.stop_running(g, p, "runtime.Gosched", own=True)  # goschedImpl: globrunqput, wakep
                self.sched_at(p, woke + self.schedule_pass() + self.stalled_after(g))
                return
            elif code == ops.SEND:
                if self.chan_recvq[a]:
                    self.ready(self.chan_recvq[a].popleft(), g, p, "unblock (chan receive)")
                elif self.chan_buf[a] < self.prog.channels[a]:
                    self.chan_buf[a] += 1
                else:
                    self.chan_sendq[a].append(g)
                    self.park(g, self.rec.sid("chan send"))
                    return
            elif code == ops.RECV:
                if self.chan_buf[a] > 0:
                    self.chan_buf[a] -= 1
                    if self.chan_sendq[a]:
                        self.chan_buf[a] += 1  # the blocked sender's value enters the buffer
                        self.ready(self.chan_sendq[a].popleft(), g, p, "unblock (chan send)")
                elif self.chan_sendq[a]:
                    self.ready(self.chan_sendq[a].popleft(), g, p, "unblock (chan send)")
                else:
                    self.chan_recvq[a].append(g)
                    self.park(g, self.rec.sid("chan receive"))
                    return
            elif code == ops.LOCK:
                if self.mu_locked[a]:
                    self.mu_waiters[a].append(g)
                    self.park(g, self.rec.sid("sync"))
                    return
                self.mu_locked[a] = True
            elif code == ops.UNLOCK:
                if self.mu_waiters[a]:
                    self.ready(self.mu_waiters[a].popleft(), g, p, "unblock (sync)")  # hand-off
                else:
                    self.mu_locked[a] = False

    def newproc(self, parent: int, p: int, tmpl: int) -> None:
        g = self.new_g(tmpl)
        self.rec.state(LG, g, self.now, G_RUNNABLE)
        self.gflow[g] = self.rec.flow(F_CREATE, g, parent, p, self.now, self.rec.sid("go"))
        self.enqueue(p, g, True, "newproc")
        self.wakep((self.gtmpl[g], -1))

    def goexit(self, g: int) -> None:
        p = self.gp[g]
        self.gstatus[g] = GS_DEAD
        self.live -= 1
        self.last_exit = self.now
        self.rec.end(LG, g, self.now)
        self.release(p, g)

    def park(self, g: int, label: int) -> None:
        """gopark: the G waits; its P schedules."""
        p = self.gp[g]
        self.gstatus[g] = GS_WAITING
        self.rec.state(LG, g, self.now, G_WAIT, label=label)
        self.release(p, g)

    def release(self, p: int, g: int) -> None:
        self.pg[p] = -1
        self.rec.state(LP, p, self.now, P_RUN, m=self.pm[p])
        self.rec.state(LM, self.pm[p], self.now, M_RUN, p=p)
        self.sched_at(p, self.schedule_pass() + self.stalled_after(g))

    def stalled_after(self, g: int) -> int:
        """How long the traced machine kept G's M off its CPU, holding its P with no G, after the
        op G has just done (Program.stall_after; 0 where it did not, or without a kernel recording)."""
        if not self.prog.stall_after:
            return 0
        return self.prog.stall_after.get((self.gtmpl[g], self.gpc[g]), 0)

    def unblock_label(self, g: int) -> str:
        """The trace's label of G's wake-up: "unblock (REASON)", REASON its wait's (the op just run)."""
        code, a, b = self.prog.templates[self.gtmpl[g]][self.gpc[g] - 1]
        reason = self.prog.labels[a] if code == ops.BLOCK else (self.prog.labels[b] or "sleep")
        return f"unblock ({reason})" if reason else "unblock"

    def ready(self, g: int, waker: int, p: int, why: str) -> None:
        """goready: runnable on the waker's P (runnext), then wakep."""
        self.gstatus[g] = GS_RUNNABLE
        self.rec.state(LG, g, self.now, G_RUNNABLE)
        self.gflow[g] = self.rec.flow(F_WAKEUP, g, waker, p, self.now, self.rec.sid(why))
        self.enqueue(p, g, True, "ready")
        if self.wakep(self.readying(g)) and waker < 0:
            self.charge(p)  # a timer run by the scheduler: its M pays the wake (a G's CPU holds its own)

    def timer_fired(self, g: int) -> None:
        """A sleep's timer expires; the G is readied where and when an M runs the timer.

        While a P is idle, an M is parked in netpoll until the earliest timer of all Ps
        (findRunnable's checkTimersNoP): it wakes, takes an idle P and runs the timer
        (its own P's, or stolen in stealWork's last round), readying the G there. Only one
        M polls (sched.lastpoll): a timer that expires while that M is woken but has not run
        yet wakes nobody else, and the M runs it too when it runs. Else the P that owns the
        timer runs it at its next findRunnable (timers.check), unless a spinning M steals it
        first. The trace records the unblock when the timer runs.
        """
        if self.gstatus[g] != GS_WAITING:
            return
        if self.gtimer_pending[g]:
            self.gtimer_pending[g] = False
            group = self.prog.timer_groups.get((self.gtmpl[g], self.gpc[g] - 1))
            if group is not None:
                self.expire_group(g, group)
                return
        self.run_timer(g)

    def expire_group(self, g: int, group: int) -> None:
        """The timers one timers.check ran together in the trace (Program.timer_groups) expire
        together here, at the first one's (G's) expiry: those whose G sleeps on its grouped op
        now and whose own expiry is still to come are due with it. timers.check runs them in
        `when` order, the model's own expiries (G's first), and the last readied is runnext."""
        due = self.group_due(g, self.prog.timer_group_members[group], self.gtimer_pending, self.gtimer_when)
        self.run_timer(g)
        for h in due:
            self.gtimer_gen[h] += 1  # its own expiry, still in the event heap, is stale now
            self.rec.decision(self.now, self.gtimerp[h], "timer_group", f"G{h}'s timer with G{g}'s",
                              "the trace ran both in one timers.check", "its own expiry")  # fmt: skip
            self.run_timer(h)

    def group_due(
        self, g: int, members: list[tuple[int, int]], pending: list[bool], when: list[int]
    ) -> list[int]:
        """The Gs of a group's MEMBERS (template, op) but G that wait on their grouped op now
        with their own wait still PENDING: taken from it (PENDING cleared), in the order of
        their own WHEN (a timer group's or a netpoll group's)."""
        due = []
        for t, op in members:
            h = self.ginst.get(t, -1)
            if h < 0 or h == g or self.gstatus[h] != GS_WAITING or not pending[h] or self.gpc[h] - 1 != op:
                continue
            pending[h] = False
            due.append((when[h], len(due), h))
        return [h for _, _, h in sorted(due)]

    def run_timer(self, g: int) -> None:
        """G's timer is due: who runs it, where and when (see timer_fired)."""
        owner = (
            self.gtimerp[g] if 0 <= self.gtimerp[g] < self.procs else 0
        )  # procresize moved a dead P's timers
        if self.in_scheduler(owner):
            # Its own P's M is in findRunnable: it sees the timer at its next timers.check
            # (findRunnable's top; or, past its steal rounds, the netpoll(0) its pollUntil has
            # come to, stop_m), long before a thread parked in netpoll would wake for it
            # (epoll_wait waits whole milliseconds: at least 1 for a timer under 1 ms away).
            self.ptimers[owner].append(g)
            return
        if self.poller >= 0:
            self.poller_timers.append(g)
            return
        if self.npidle and not self.stw_active:
            p = self.pidleget()
            self.poller, self.poller_timers = p, [g]
            self.push(self.now + self.k.wake_m_ns, EV_TIMER_RUN, 0, p)  # before startm: first at that instant
            self.startm(p, False, self.k.wake_m_ns)
            self.poller_epoch = self.pepoch[p]
            return
        if self.pstatus[owner] == PS_RUN and not self.stw_active:
            self.ptimers[owner].append(g)
            return
        self.ready(g, -1, owner, self.unblock_label(g))  # its P is in a syscall or stopped: queued behind it

    def in_scheduler(self, p: int) -> bool:
        """P's M runs the scheduler (findRunnable, a spin, a wake-up's cost) with no G on P."""
        return (self.pstatus[p] == PS_RUN and self.pg[p] < 0 and not self.pwaking[p]
                and not self.stw_active)  # fmt: skip

    def poller_runs(self, p: int) -> None:
        """The woken netpoll M runs on P: timers.check readies the Gs of every timer that expired
        since it was woken, in order, on P."""
        due, self.poller_timers, self.poller = self.poller_timers, [], -1
        self.polled_on[p] = True
        for g in due:
            if self.gstatus[g] == GS_WAITING:
                self.ready(g, -1, p, self.unblock_label(g))

    def run_timers(self, owner: int, p: int) -> bool:
        """timers.check: run OWNER's expired timers on P (their Gs to P's runnext, in order)."""
        due = self.ptimers[owner]
        if not due:
            return False
        self.ptimers[owner] = []
        for g in due:
            if self.gstatus[g] == GS_WAITING:
                self.ready(g, -1, p, self.unblock_label(g))
        return True

    def polled(self, g: int, p: int) -> None:
        """The M blocked in netpoll runs, woken by G's fd (-1: by a timer), and takes idle P
        (findRunnable's blocking netpoll): epoll_wait hands it every fd ready by now, not only
        the one that woke it; it runs the list's head and injectglist takes the rest (one to
        the global queue with an M per idle P, the others to P's queue). The Gs readied
        meanwhile waited in netready for it (nobody else polls until it has: sched.lastpoll
        is 0). Then the timers that expired meanwhile."""
        got = self.netpoll_list([g] if g >= 0 else [])
        self.lastpoll = self.now
        if self.pepoch[p] != self.poller_epoch:
            # A stop-the-world took the P before the M ran: pidleget finds none (stopped Ps
            # leave the idle list), so injectglist puts the Gs on the global queue with no P,
            # and the timers stay for whoever runs timers now; the M stops.
            due, self.poller_timers, self.poller = self.poller_timers, [], -1
            self.inject(got, "unblock (network)")
            for t in due:
                self.push(self.now, EV_WAKE_TIMER, t, self.gtimer_gen[t])
            return
        if not got:
            self.poller_runs(p)
            return
        gp = got[0]
        self.gstatus[gp] = GS_RUNNABLE
        self.rec.state(LG, gp, self.now, G_RUNNABLE)
        self.gflow[gp] = self.rec.flow(F_WAKEUP, gp, -1, p, self.now, self.rec.sid("unblock (network)"))
        # findRunnable returns it at once (list.pop(), after injectglist of the rest): the M runs
        # it when it has run (held, like a G whose M pays for its wake-ups first), not through
        # findRunnable's top, so the timers that expired meanwhile wait on P's heap for P's next
        # timers.check, and P's runnext does not go first.
        self.rec.decision(self.now, p, "next_g", f"G{gp} from netpoll", "the blocking netpoll returned it",
                          f"{len(got)} ready on the network")  # fmt: skip
        self.held[p], self.held_inherit[p] = gp, False
        self.inject(got[1:], "unblock (network)", p)
        due, self.poller_timers, self.poller = self.poller_timers, [], -1
        self.polled_on[p] = True
        self.ptimers[p].extend(due)

    def netpoll_list(self, first: list[int]) -> list[int]:
        """What netpoll returns: the Gs FIRST and then those in netready, in the order their fds
        became ready, as a gList — netpollready pushes each at the head (toRun.push), so the
        G whose fd became ready last is the head, which findRunnable runs (list.pop())."""
        got, self.netready = [*first, *self.netready], []
        got.reverse()
        return got

    def net_fired(self, g: int) -> None:
        """G's fd becomes ready; with it, the fds one netpoll found ready together in the trace
        (Program.net_groups): those whose G waits on its grouped op now and whose own readiness is
        still to come are ready with it, in the order of their own readiness (G's first), as
        netpoll lists them."""
        self.gnet_pending[g] = False
        group = self.prog.net_groups.get((self.gtmpl[g], self.gpc[g] - 1))
        if group is None:
            self.net_ready(g)
            return
        due = self.group_due(g, self.prog.net_group_members[group], self.gnet_pending, self.gnet_when)
        self.net_ready(g)
        for h in due:
            self.gnet_gen[h] += 1  # its own readiness, still in the event heap, is stale now
            self.rec.decision(self.now, -1, "net_group", f"G{h}'s fd with G{g}'s",
                              "the trace found both in one netpoll", "its own readiness")  # fmt: skip
            self.net_ready(h)

    def net_ready(self, g: int) -> None:
        self.netwaiters -= 1
        if self.npidle and not self.stw_active and self.poller < 0:
            # An M blocked in netpoll (there is one while a P is idle) wakes and reads the ready
            # G when it runs: that is when the trace says the G was unblocked, and until then
            # the G is in no queue another P could steal it from.
            p = self.pidleget()
            self.poller = p
            self.push(self.now + self.k.wake_m_ns, EV_POLLED, g, p)  # before startm: first at that instant
            self.startm(p, False, self.k.wake_m_ns)
            self.poller_epoch = self.pepoch[p]
            return
        # For the next findRunnable's or sysmon's poll (the one poller, woken already, has
        # returned from epoll_wait).
        self.netready.append(g)

    def inject(self, gs: list[int], why: str, p: int = -1) -> None:
        """injectglist: Gs made runnable by a netpoll on P (-1: one without a P, e.g. sysmon's).

        Without a P all go to the global queue with an M for each idle P; with one, one G
        per idle P goes to the global queue (each with an M) and the rest to P's own local
        queue, then wakep. The trace records their unblock on P. An empty list does nothing
        (injectglist returns first): netpoll's one G, which findRunnable runs itself, wakes nobody.
        """
        if not gs:
            return
        for g in gs:
            self.gstatus[g] = GS_RUNNABLE
            self.rec.state(LG, g, self.now, G_RUNNABLE)
            self.gflow[g] = self.rec.flow(F_WAKEUP, g, -1, p, self.now, self.rec.sid(why))
        if p < 0:
            self.globq.extend(gs)
            self.start_idle(len(gs), gs)
            return
        n = min(self.npidle, len(gs))
        self.globq.extend(gs[:n])
        woke = self.start_idle(n, gs[:n])
        for g in gs[n:]:
            self.enqueue(p, g, False, "netpoll")  # runqputbatch; a full queue spills to the global one
        woke += self.wakep(self.readying(gs[0]))
        for _ in range(woke):
            self.charge(p)  # findRunnable's netpoll: P's M makes these wake-ups

    # ---- queues -----------------------------------------------------------------------------

    def enqueue(self, p: int, g: int, next_: bool, why: str) -> None:
        where = self.pol.enqueue(self, p, g, next_)
        self.rec.decision(self.now, p, "enqueue", f"G{g} {where}", why,
                          f"runnext, local tail ({len(self.runq[p])}/{self.c.runq_size}), global")  # fmt: skip

    def runq_overflow(self, p: int, g: int) -> None:
        """runqputslow: half of the full local queue, then G, to the global queue."""
        q = self.runq[p]
        for _ in range(len(q) // 2):
            self.globq.append(q.popleft())
        self.globq.append(g)

    def globrunqput(self, g: int) -> None:
        self.globq.append(g)

    def globrunqget_batch(self, p: int) -> int:
        """findRunnable's global batch: min(runq_size/2, n, n/gomaxprocs+1); one runs, the rest go local."""
        n = len(self.globq)
        take = min(self.c.runq_size // 2, n, n // self.procs + 1)
        g = self.globq.popleft()
        for _ in range(take - 1):
            self.pol.enqueue(self, p, self.globq.popleft(), False)
        self.rec.decision(self.now, p, "next_g", f"G{g} + {take - 1} from the global queue",
                          "local queue empty", f"global has {n}; batch min({self.c.runq_size // 2}, {n}, "
                          f"{n}/{self.procs}+1)")  # fmt: skip
        return g

    # ---- Ps and Ms --------------------------------------------------------------------------

    def pidleget(self) -> int:
        p = self.pidle.pop()
        self.npidle -= 1
        return p

    def pidleput(self, p: int) -> None:
        self.owed[p] = 0
        if self.safepoint_wait:
            self.safepoint_wait.discard(p)  # a P going idle runs forEachP's function on its way
        on_cpu = self.pstatus[p] == PS_RUN and not self.pwaking[p]
        self.polled_on[p] = False
        if self.cpuwait[p]:  # a stop took the P of an M still waiting for a CPU
            self.cpuwait[p] = False
            if p in self.cpu_waiters:
                self.cpu_waiters.remove(p)
        if self.held[p] >= 0:  # a stop-the-world came while its M paid a wake: the G waits on runnext
            g, self.held[p] = self.held[p], -1
            self.pol.enqueue(self, p, g, True)
        self.pstatus[p] = PS_IDLE
        self.spinround[p] = 0
        self.dropping[p] = False
        self.grab[p] = None
        self.pwaking[p] = False
        self.pidle.append(p)
        self.npidle += 1
        self.pepoch[p] += 1
        m = self.pm[p]
        if m >= 0:
            self.rec.state(LM, m, self.now, M_IDLE)
            self.midle.append(m)
        self.pm[p] = -1
        self.rec.state(LP, p, self.now, P_STOP if self.stw_active else P_IDLE)
        self.refire_timers(p)
        if on_cpu:
            self.cpu_freed()  # the M stops (or blocks in netpoll): off its CPU

    def refire_timers(self, p: int) -> None:
        # An idle (or destroyed) P runs no timers itself: its expired ones go to whoever runs
        # timers now, i.e. timer_fired decides again at this instant.
        due, self.ptimers[p] = self.ptimers[p], []
        for g in due:
            self.push(self.now, EV_WAKE_TIMER, g, self.gtimer_gen[g])

    def startm(self, p: int, spinning: bool, delay: int, woken: bool = True) -> None:
        """An M (idle or new) takes P and runs schedule() after DELAY (the thread's wake-up).

        A WOKEN M shows on P only when it runs: the trace's ProcStart comes from acquirep on
        the woken thread, so until then the P is idle there (and here, to measure alike).
        """
        self.pstatus[p] = PS_RUN
        m = self.midle.pop() if self.midle else self.new_m()
        self.pm[p] = m
        if woken:
            self.pwaking[p] = True
        else:
            self.rec.state(LM, m, self.now, M_RUN, p=p)
            self.rec.state(LP, p, self.now, P_RUN, m=m)
        if spinning:
            self.spinning[p] = True
            self.nmspinning += 1
        self.sched_at(p, delay)

    def ms_on_cpu(self) -> int:
        """Threads on a CPU, as the machine rule counts them: Ms holding a running P (a G, the
        scheduler or a spin), but not one woken and not yet run, nor one whose G is in a
        replayed OS stall (the kernel said it was off its CPU), nor the M of a G waiting in
        forEachP (asleep in notetsleep, though the trace shows its G running). Nor sysmon or Ms
        in syscalls (docs/model.md, "The machine's CPUs")."""
        n = 0
        for q in range(self.procs):
            if self.pstatus[q] == PS_RUN and not self.pwaking[q]:
                g = self.pg[q]
                if g < 0 or not (self.in_stall(g) or (self.safepoint_wait and g == self.safepoint_caller)):
                    n += 1
        return n

    def cpu_wait(self, p: int) -> bool:
        """The machine's CPUs (not a rule of proc.go): P's woken M is runnable, but with every
        CPU taken by another M it waits — P stays handed to it, and, if it was woken to spin,
        counted in nmspinning, so nobody else is woken meanwhile — until an M leaves its CPU
        (cpu_freed) or the OS's slice (Costs.cpu_slice_ns) runs it anyway. True: it waits."""
        if self.cpuwait[p]:  # a CPU came free (cpu_freed took it off the list), or the slice is over
            self.cpuwait[p] = False
            if p in self.cpu_waiters:
                self.cpu_waiters.remove(p)
            return False
        if self.polled_on[p]:  # netpoll's M has run already: it goes on to schedule()
            self.polled_on[p] = False
            return False
        if not self.cpus or self.ms_on_cpu() < self.cpus:
            return False
        self.cpuwait[p] = True
        self.cpu_waiters.append(p)
        self.rec.decision(self.now, p, "cpu_wait", f"M{self.pm[p]} waits for a CPU",
                          f"{self.cpus} CPUs, each running an M", "run at once")  # fmt: skip
        self.sched_at(p, self.k.cpu_slice_ns)
        return True

    def cpu_freed(self) -> None:
        """An M left its CPU: the first M waiting for one runs now."""
        if self.cpu_waiters and self.ms_on_cpu() < self.cpus:
            self.sched_at(self.cpu_waiters.popleft(), 0)

    def wake_sysmon(self) -> None:
        """notewakeup(&sched.sysmonnote): entersyscall, exitsyscall with an idle P, startTheWorld.

        sysmon then resets its idle count and delay (syscallWake) and goes on at once; a timer
        or a P started for other work does not wake it (see sysmon).
        """
        if self.sysmon_parked:
            self.sysmon_parked = False
            self.sysmon_delay = self.c.sysmon_min_sleep_us
            self.sysmon_idle = 0
            self.sysmon_epoch += 1
            self.push(self.now, EV_SYSMON, self.sysmon_epoch, 1)

    def next_timer_ns(self) -> int:
        """timeSleepUntil: when the earliest timer fires (-1: none); an expired one not yet run counts as now."""
        if any(self.ptimers):
            return self.now
        return min((t for t, _, k, _, _ in self.heap if k == EV_WAKE_TIMER), default=-1)

    def new_m(self) -> int:
        self.mcount += 1
        return self.mcount

    def sched_at(self, p: int, delay: int) -> None:
        self.pepoch[p] += 1
        self.push(self.now + delay, EV_SCHED, p, self.pepoch[p])

    def readying(self, g: int) -> tuple[int, int]:
        """Where G was made runnable in its program: (template, the wait op it just ended)."""
        return self.gtmpl[g], self.gpc[g] - 1

    def wake_delay(self, readying: tuple[int, int] | None = None) -> int:
        """How long a parked thread woken for readied work takes to run (startm's notewakeup).

        A replay's wake-up at a READYING the trace measured one at (Program.wake_ns, the
        machine's); else a draw from ``Costs.wake_m_samples_ns`` when given, or from all the
        replayed trace's measured wake-ups (Program.wake_samples_ns) when it measured at least
        MIN_DRAWN_WAKEUPS, else the calibrated constant. Timers and the network keep the
        constant: a replayed wait's length already holds that thread's lateness.
        """
        if readying is not None and self.wake_ns:
            got = self.wake_ns.get(readying)
            if got is not None:
                return got
        return _draw(self.wake_rng, self.k.wake_m_samples_ns or self.wake_draw, self.k.wake_m_ns)

    def waker_cost(self) -> int:
        """What one thread wake-up costs the M that makes it from the scheduler: a draw from the
        replayed trace's (Program.waker_samples_ns), else its median or the calibrated constant."""
        return _draw(self.waker_rng, self.waker_draw, self.waker_ns)

    def schedule_pass(self) -> int:
        """How long schedule() takes after a G stops, until the next G it finds at hand runs: a draw
        from the replayed trace's (Program.schedule_samples_ns), or the calibrated constant."""
        return _draw(self.pass_rng, self.pass_draw, self.k.schedule_ns)

    def wakep(self, readying: tuple[int, int] | None = None) -> bool:
        """wakep: one spinning M at a time, and only onto an idle P. True if it woke a thread."""
        if self.nmspinning != 0:
            return False
        if self.npidle == 0 or self.stw_active:
            self.needspinning = True  # pidlegetSpinning found no P
            return False
        p = self.pidleget()
        self.rec.decision(self.now, p, "wakep", f"start a spinning M on P{p}", "work was readied",
                          f"{self.npidle + 1} idle Ps, 0 spinning")  # fmt: skip
        self.startm(p, True, self.wake_delay(readying))
        return True

    def charge(self, p: int) -> None:
        """P's M, in the scheduler (no G on P), woke a thread: startm's notewakeup, a futex wake
        syscall, is its own time, paid before it runs the G it chose (schedule, model.wakecost)."""
        if self.waker_ns and self.pstatus[p] == PS_RUN and self.pg[p] < 0:
            self.owed[p] += self.waker_cost()

    def wakep_for_global(self) -> None:
        # Start as many Ms as idle Ps can take the global Gs.
        self.start_idle(len(self.globq))

    def start_idle(self, n: int, gs: list[int] | None = None) -> int:
        """injectglist's startIdle: an M on each of up to N idle Ps (for Gs GS, if given). Returns
        how many it woke."""
        woke = 0
        for i in range(min(n, self.npidle)):
            if self.stw_active:
                break
            self.startm(self.pidleget(), False, self.wake_delay(self.readying(gs[i]) if gs else None))
            woke += 1
        return woke

    # ---- schedule / findRunnable / steal ----------------------------------------------------

    def schedule(self, p: int) -> None:
        if self.pstatus[p] != PS_RUN:
            return
        if self.pwaking[p]:  # the woken M runs now: acquirep
            if self.cpu_wait(p):
                return
            self.pwaking[p] = False
            self.rec.state(LM, self.pm[p], self.now, M_RUN, p=p)
            self.rec.state(LP, p, self.now, P_RUN, m=self.pm[p])
        if self.pg[p] >= 0:
            return
        if self.safepoint_wait:
            self.safepoint_wait.discard(p)  # schedule()'s runSafePointFn
        if self.held[p] >= 0:  # the M has paid for the threads it woke: it runs the G it chose
            if self.owed[p]:  # (netpoll's G: injectglist's wake-ups came after it was chosen)
                self.rec.decision(self.now, p, "waker_cost", f"G{self.held[p]} after {self.owed[p]} ns",
                                  "this M woke a thread (startm's futex wake)", "run it at once")  # fmt: skip
                self.sched_at(p, self.owed[p])
                self.owed[p] = 0
                return
            g, self.held[p] = self.held[p], -1
            self.execute(p, g, self.held_inherit[p])
            return
        if self.stw_active:
            # findRunnable sees gcwaiting and stops (gcstopm): only the G that stopped the world
            # runs through a stop, and its P gets here only if the G left it meanwhile.
            if self.spinning[p]:
                self.spinning[p] = False
                self.nmspinning -= 1
            self.pidleput(p)
            return
        g, inherit = self.find_runnable(p)
        if g == SPINNING:
            return
        if g < 0:
            self.stop_m(p)
            return
        if self.spinning[p]:
            self.spinning[p] = False  # resetspinning: the last spinner to find work wakes another
            self.nmspinning -= 1
            if self.nmspinning == 0 and self.wakep():
                self.charge(p)
        if self.owed[p]:
            # The futex wakes this M made since its last G (timers it ran, netpoll's injectglist,
            # resetspinning; goschedImpl's is paid before its schedule()) take its time before execute.
            self.rec.decision(self.now, p, "waker_cost", f"G{g} after {self.owed[p]} ns",
                              "this M woke a thread (startm's futex wake)", "run it at once")  # fmt: skip
            self.held[p], self.held_inherit[p] = g, inherit
            self.sched_at(p, self.owed[p])
            self.owed[p] = 0
            return
        self.execute(p, g, inherit)

    def find_runnable(self, p: int) -> tuple[int, bool]:
        """findRunnable's next G for P: (-1, _) for none, (SPINNING, _) while its M steals.

        Stealing takes time (``Costs.steal_ns`` a round): the M spins through steal_tries
        rounds, one event each, holding its P and counted in nmspinning all along, so a
        wakep meanwhile wakes nobody; only after the last round does it give its P up.
        """
        if self.spinround[p]:
            return self.steal_round(p)
        if self.dropping[p]:
            self.dropping[p] = False
            return self.before_releasep(p)
        c = self.c
        self.run_timers(p, p)  # findRunnable starts with pp.timers.check
        if self.schedtick[p] % c.global_queue_tick == 0 and self.globq:
            g = self.globq.popleft()
            self.rec.decision(self.now, p, "next_g", f"G{g} from the global queue",
                              f"schedtick {self.schedtick[p]} % {c.global_queue_tick} == 0 (fairness)",
                              f"local {len(self.runq[p]) + (self.runnext[p] >= 0)}, global {len(self.globq) + 1}")  # fmt: skip
            return g, False
        nloc = len(self.runq[p]) + (self.runnext[p] >= 0)
        g, inherit = self.pol.next_local(self, p)
        if g >= 0:
            self.rec.decision(self.now, p, "next_g", f"G{g} from the local queue",
                              "runnext (inherits the time slice)" if inherit else "local queue",
                              f"local {nloc}, global {len(self.globq)}")  # fmt: skip
            return g, inherit
        if self.globq:
            return self.globrunqget_batch(p), False
        if self.netready and self.poller < 0:  # sched.lastpoll != 0: no M is in netpoll
            got = self.netpoll_list([])
            self.lastpoll = self.now
            first = got[0]  # list.pop(); injectglist traces the rest first, then this one
            self.inject(got[1:], "unblock (network)", p)
            self.gstatus[first] = GS_RUNNABLE
            self.rec.state(LG, first, self.now, G_RUNNABLE)
            self.gflow[first] = self.rec.flow(
                F_WAKEUP, first, -1, p, self.now, self.rec.sid("unblock (network)")
            )
            self.rec.decision(self.now, p, "next_g", f"G{first} from netpoll", "local and global queues empty",
                              f"{len(got)} ready on the network")  # fmt: skip
            return first, False
        if self.spinning[p] or self.pol.may_spin(self):
            if not self.spinning[p]:
                self.become_spinning(p)
            self.spinround[p] = 1
            self.sched_at(p, self.steal_ns)  # the first round, done when it has taken its time
            return SPINNING, False
        self.rec.decision(self.now, p, "may_spin", "no", f"{self.c.spinning_factor}×{self.nmspinning} "
                          f"spinning ≥ {self.procs}−{self.npidle} busy Ps", "spin and steal")  # fmt: skip
        if self.drop_ns:
            # The rest of findRunnable without a spin (netpoll(0), the idle GC worker's turn,
            # sched.lock) takes the traced machine's time, the M holding its P meanwhile.
            self.dropping[p] = True
            self.sched_at(p, self.drop_ns)
            return SPINNING, False
        return self.before_releasep(p)

    def before_releasep(self, p: int) -> tuple[int, bool]:
        """Under sched.lock, before an M refused a spin gives its P up: the global queue once
        more (work put there meanwhile), and needspinning."""
        if self.globq:
            return self.globrunqget_batch(p), False
        if self.needspinning and not self.stw_active:
            # Before releasep (under sched.lock): work was readied while no P was idle, so this M,
            # refused a spin, spins after all rather than drop its P (becomeSpinning; goto top).
            self.rec.decision(self.now, p, "may_spin", "yes: needspinning",
                              "a wakep found no idle P since the last M began to spin",
                              "drop the P")  # fmt: skip
            self.become_spinning(p)
            return self.find_runnable(p)
        return -1, False

    def become_spinning(self, p: int) -> None:
        """mp.becomeSpinning: counted in nmspinning, and needspinning served."""
        self.spinning[p] = True
        self.nmspinning += 1
        self.needspinning = False

    def steal_round(self, p: int) -> tuple[int, bool]:
        """The spinning M on P ends its current stealWork round: a G, the next round, or none.

        A round that has to take a running P's runnext sleeps in runqgrab first (GRAB_WAIT):
        the M holds its P and spins through the sleep and resumes that round after it. After
        the last round findRunnable looks at the global queue once more (under sched.lock,
        before releasep): work put there while it stole is not left behind.
        """
        i = self.spinround[p] - 1
        self.steal_inherit = False
        g = self.grab_resume(p) if self.grab[p] is not None else self.steal_once(p, i)
        if g == GRAB_WAIT:
            self.sched_at(p, self.grab_wait_ns)
            return SPINNING, False
        if g >= 0:
            self.spinround[p] = 0
            return g, self.steal_inherit
        if i + 1 < self.c.steal_tries:
            self.spinround[p] += 1
            self.sched_at(p, self.steal_ns)
            return SPINNING, False
        self.spinround[p] = 0
        if self.globq:
            return self.globrunqget_batch(p), False
        return -1, False

    def steal_work(self, p: int) -> int:
        """stealWork's rounds at one instant (the engine spreads them over time, steal_round);
        runqgrab's sleeps end at once, as if nothing moved meanwhile."""
        for i in range(self.c.steal_tries):
            g = self.steal_once(p, i)
            while g == GRAB_WAIT:
                g = self.grab_resume(p)
            if g >= 0:
                return g
        return -1

    def steal_once(self, p: int, i: int, order: list[int] | None = None, start: int = 0) -> int:
        """Round I of stealWork: every P once in a random order; timers and runnext in the last.

        GRAB_WAIT: the M sleeps in runqgrab before taking a running victim's runnext
        (self.grab holds where it is; grab_resume goes on from there).
        """
        tries = self.c.steal_tries
        last = i == tries - 1
        if order is None:
            order = self.pol.steal_order(self, p)
        for k in range(start, len(order)):
            v = order[k]
            if v == p:
                continue
            if last and self.ptimers[v] and self.run_timers(v, p):
                # The last round steals timers before runnext; running them readied Gs here, and
                # stealWork returns runqget's G with its inheritTime (`return gp, inheritTime`):
                # a timer's G, on this P's runnext, runs in the thief's time slice (no schedtick++).
                g, self.steal_inherit = self.pol.next_local(self, p)
                if g >= 0:
                    self.rec.decision(self.now, p, "steal", f"G{g} (timer of P{v})",
                                      f"round {i + 1} of {tries}: timers only in the last",
                                      f"order {order}")  # fmt: skip
                    return g
            if self.pstatus[v] == PS_IDLE:
                continue
            g = self.runqgrab(p, v, last, order, k)
            if g != -1:
                return g
        return -1

    def runqgrab(self, p: int, v: int, runnext_too: bool, order: list[int], k: int) -> int:
        """runqsteal from victim V: half its queue (the last taken runs), else in the last round its
        runnext — after a sleep if V is running (GRAB_WAIT), so that V may schedule it itself."""
        q = self.runq[v]
        n = len(q)
        take = self.pol.steal_amount(n)
        if take:
            batch = [q.popleft() for _ in range(take)]
            g = batch.pop()
            self.runq[p].extend(batch)
            self.steals += 1
            self.rec.decision(self.now, p, "steal", f"{take} of {n} from P{v}, run G{g}",
                              f"round {self.spinround[p] or '-'} of {self.c.steal_tries}, first non-empty victim",
                              f"order {order}; amount policy {take} of {n}")  # fmt: skip
            return g
        if not runnext_too or self.runnext[v] < 0:
            return -1
        if self.pstatus[v] == PS_RUN:
            # "Sleep to ensure that pp isn't about to run the g we are about to steal": usleep(3),
            # which the OS stretches by its timer slack; the M keeps its P and its spin meanwhile.
            self.grab[p] = (v, self.runnext[v], order, k)
            self.rec.decision(self.now, p, "runqgrab_wait", f"sleep {self.grab_wait_ns} ns before P{v}'s runnext",
                              f"P{v} is running: it may schedule G{self.runnext[v]} itself",
                              "take it now")  # fmt: skip
            return GRAB_WAIT
        return self.take_runnext(p, v)

    def grab_resume(self, p: int) -> int:
        """After runqgrab's sleep: the runnext it saw if still there (the CAS), else look at the
        victim again (runqgrab's loop: its queue, a new runnext, another sleep), then the rest."""
        v, seen, order, k = self.grab[p]  # type: ignore[misc]
        self.grab[p] = None
        last = self.c.steal_tries - 1
        if self.pstatus[v] != PS_IDLE:
            if self.runnext[v] == seen:
                return self.take_runnext(p, v)
            g = self.runqgrab(p, v, True, order, k)
            if g != -1:
                return g
        return self.steal_once(p, last, order, k + 1)

    def take_runnext(self, p: int, v: int) -> int:
        g = self.runnext[v]
        self.runnext[v] = -1
        self.steals += 1
        self.rec.decision(self.now, p, "steal", f"G{g} (runnext of P{v})",
                          f"round {self.c.steal_tries} of {self.c.steal_tries}: runnext only in the last",
                          "leave it to its P")  # fmt: skip
        return g

    def stop_m(self, p: int) -> None:
        """Nothing to run: release P; a spinning M re-checks the queues once after dropping its spin,
        then the M polls the network (blocking) if Gs wait there or a timer of P's is due."""
        was_spinning = self.spinning[p]
        if was_spinning:
            self.spinning[p] = False
            self.nmspinning -= 1
        due = bool(self.ptimers[p])  # expired since its timers.check (pidleput hands them on)
        self.pidleput(p)
        if was_spinning and (self.globq or any(self.runq) or any(r >= 0 for r in self.runnext)):
            if self.npidle and not self.stw_active:
                q = self.pidleget()
                self.needspinning = False  # becomeSpinning
                self.startm(q, True, self.steal_ns, woken=False)  # this M, back with a P
                return
            self.needspinning = True  # pidlegetSpinning found no P
        if (self.netready or due) and self.poller < 0 and not self.stw_active:
            # findRunnable's blocking netpoll: with no P, this M blocks in netpoll (nobody else
            # does, sched.lastpoll.Swap(0) != 0: a poller already blocked would have taken these
            # at once, net_ready, and a woken one not yet run takes them when it runs), which
            # returns at once with the Gs whose fds became ready while it held its P, or as
            # its timeout (pollUntil, P's next timer) has come; it takes an idle P back
            # (pidleget: the top, the one it just released) and runs the first, or goes back to
            # findRunnable's top, whose timers.check runs the timer (timer_fired, in_scheduler).
            self.startm(self.pidleget(), False, self.k.schedule_ns, woken=False)

    def execute(self, p: int, g: int, inherit: bool) -> None:
        if not inherit:
            self.schedtick[p] += 1
        self.pg[p] = g
        m = self.pm[p]
        self.gp[g] = p
        self.gm[g] = m
        self.gstatus[g] = GS_RUNNING
        self.rec.state(LG, g, self.now, G_RUN, p=p, m=m)
        self.rec.state(LP, p, self.now, P_RUN, g=g, m=m)
        self.rec.state(LM, m, self.now, M_RUN, g=g, p=p)
        if self.gflow[g] >= 0:
            self.rec.flow_end(self.gflow[g], p, m, self.now)
            self.gflow[g] = -1
        self.step(g)

    # ---- syscalls ---------------------------------------------------------------------------

    def entersyscall(self, g: int, dur: int) -> None:
        p = self.gp[g]
        self.wake_sysmon()  # entersyscallWakeSysmon, if it sleeps
        if self.safepoint_wait:
            self.safepoint_wait.discard(p)  # entersyscall runs forEachP's function (runSafePointFn)
        self.pstatus[p] = PS_SYSCALL
        self.syscalltick[p] += 1
        self.gstatus[g] = GS_SYSCALL
        m = self.gm[g]
        self.rec.state(LG, g, self.now, G_SYS, p=p, m=m)
        self.rec.state(LM, m, self.now, M_SYS, g=g, p=p)
        self.ggen[g] += 1
        self.push(self.now + dur, EV_SYSCALL, g, self.ggen[g])
        if self.cpu_waiters:
            self.cpu_freed()  # its thread blocks in the syscall

    def exitsyscall(self, g: int) -> None:
        p, m = self.gp[g], self.gm[g]  # (step() moved the pc past the syscall already)
        if self.pstatus[p] == PS_SYSCALL and self.pg[p] == g and self.stw_active:
            self.pg[p] = -1  # the world stopped meanwhile: the P stops, the G waits for it
            self.pidleput(p)
        if self.pstatus[p] == PS_SYSCALL and self.pg[p] == g:
            # Fast path: the P was not retaken.
            self.pstatus[p] = PS_RUN
            self.gstatus[g] = GS_RUNNING
            self.rec.state(LG, g, self.now, G_RUN, p=p, m=m)
            self.rec.state(LM, m, self.now, M_RUN, g=g, p=p)
            self.step(g)
            return
        # No from_p, as the trace has it: a blocked syscall ends on an M without a P
        # (GoSyscallEndBlocked), so where the G then runs is no steal and no migration.
        flow = self.rec.flow(F_SYSCALL_EXIT, g, -1, -1, self.now, self.rec.sid("exit blocked syscall"))
        q = -1
        if not self.stw_active and p < self.procs and self.pstatus[p] == PS_SYSCALL and self.pg[p] != g:
            # exitsyscallTryGetP: the old P back if the thread it was handed to is in a syscall
            # now (setBlockOnExitSyscall, takeP); that thread's G finds no P when it returns.
            q = p
        elif self.npidle and not self.stw_active:
            q = self.pidleget()  # else an idle P: the top of the idle list, old or not
            self.wake_sysmon()
        if q >= 0:
            self.pstatus[q] = PS_RUN
            self.pm[q] = m
            self.pg[q] = -1
            self.rec.state(LP, q, self.now, P_RUN, m=m)
            self.pepoch[q] += 1
            self.gflow[g] = flow
            self.execute(q, g, False)
            return
        # exitsyscall0: no P; the G goes to the global queue and its M stops.
        self.gstatus[g] = GS_RUNNABLE
        self.rec.state(LG, g, self.now, G_RUNNABLE)
        self.rec.state(LM, m, self.now, M_IDLE)
        self.midle.append(m)
        self.gflow[g] = flow
        self.globrunqput(g)

    def handoffp(self, p: int) -> None:
        """The P of a blocked syscall: to a new M if there is work, or to spin if nobody does, else idle."""
        self.pg[p] = -1
        self.pstatus[p] = PS_RUN  # in handoff
        if self.runq[p] or self.runnext[p] >= 0 or self.globq:
            self.pm[p] = -1
            self.startm_on(p, False)
            return
        if self.nmspinning + self.npidle == 0:
            self.pm[p] = -1
            self.needspinning = False
            self.startm_on(p, True)
            return
        self.pm[p] = -1
        self.pidleput(p)

    def startm_on(self, p: int, spinning: bool) -> None:
        self.pstatus[p] = PS_IDLE
        self.startm(p, spinning, self.wake_delay())

    # ---- sysmon -----------------------------------------------------------------------------

    def sysmon(self, resumed: bool = False) -> None:
        """One turn of sysmon's loop after its usleep (RESUMED: after a sysmonwait instead)."""
        if not resumed:
            self.sysmon_wakeups += 1  # as the lab counts them: returns from usleep
        now = self.now
        if not resumed and (self.stw_active or self.npidle == self.procs):
            # sysmonwait until the next timer (at most forcegcperiod/2) or a notewakeup; a
            # timer's wake-up keeps idle and delay ("to avoid adding system load to
            # applications that spend most of their time sleeping").
            nxt = self.next_timer_ns()
            if nxt < 0 or nxt > now:
                self.sysmon_parked = True
                self.sysmon_epoch += 1
                # notetsleep is a futex wait with a timeout, which the OS ends late by its timer
                # slack like a nanosleep (a notewakeup is not a timer and comes at once).
                limit = now + self.c.sysmon_wait_max_ns
                timeout = limit if nxt < 0 else min(nxt, limit)
                self.push(timeout + self.k.timer_slack_ns, EV_SYSMON, self.sysmon_epoch, 1)
                return
        self.sysmon_parked = False
        if self.netready and self.poller < 0 and self.lastpoll + self.c.netpoll_interval_ns < now:
            got = self.netpoll_list([])
            self.lastpoll = now
            self.inject(got, "unblock (network)")
        n = 0 if self.stw_active else self.retake(now)
        self.sysmon_idle = 0 if n else self.sysmon_idle + 1
        delay = self.pol.sysmon_tick(self, self.sysmon_delay, self.sysmon_idle)
        self.sysmon_delay = delay
        self.push(now + self.sysmon_sleep_ns(delay), EV_SYSMON, self.sysmon_epoch, 0)

    def sysmon_sleep_ns(self, delay_us: int) -> int:
        """How long sysmon's usleep(delay) lasts: nanosleep, which the OS ends late by its timer
        slack (measured here: a 20 µs sleep's timer fires 57-67 µs past its end; docs/model.md)."""
        return delay_us * 1000 + self.k.timer_slack_ns

    def retake(self, now: int) -> int:
        n = 0
        quantum = self.pol.quantum(self)
        for p in range(self.procs):
            s = self.pstatus[p]
            if s not in (PS_RUN, PS_SYSCALL):
                continue
            sysretake = False
            t = self.schedtick[p]
            if self.pd_schedtick[p] != t:
                self.pd_schedtick[p] = t
                self.pd_schedwhen[p] = now
            elif self.pd_schedwhen[p] + quantum <= now:
                self.preemptone(p, quantum)
                sysretake = True
            if s != PS_SYSCALL:
                continue
            st = self.syscalltick[p]
            if not sysretake and self.pd_syscalltick[p] != st:
                self.pd_syscalltick[p] = st
                self.pd_syscallwhen[p] = now
                continue
            if (not self.runq[p] and self.runnext[p] < 0 and self.nmspinning + self.npidle > 0
                    and self.pd_syscallwhen[p] + self.c.syscall_retake_ns > now):  # fmt: skip
                continue
            g = self.pg[p]
            self.syscalltick[p] += 1
            self.retakes += 1
            n += 1
            self.rec.decision(now, p, "retake", f"P{p} from G{g}'s syscall",
                              "work queued or nobody spinning/idle" if self.runq[p] or not (self.nmspinning + self.npidle)
                              else "syscall longer than 10 ms", "leave the P with the syscall")  # fmt: skip
            self.handoffp(p)
        return n

    def preemptone(self, p: int, quantum: int) -> None:
        g = self.pg[p]
        if g < 0 or self.gstatus[g] != GS_RUNNING:
            return
        if self.in_stall(g):
            self.gpreempt[g] = _BY_SYSMON  # preemptM's signal: handled when the thread runs again
            return
        self.preempt_now(g, p, quantum)

    def in_stall(self, g: int) -> bool:
        tmpl = self.prog.templates[self.gtmpl[g]]
        pc = self.gpc[g]
        return pc < len(tmpl) and tmpl[pc][0] == ops.STALL and self.grem[g] >= 0

    def preempt_now(self, g: int, p: int, quantum: int) -> None:
        self.preemptions += 1
        self.rec.decision(self.now, p, "preempt", f"G{g}",
                          f"same schedtick {self.schedtick[p]} for ≥ {quantum} ns", "let it run")  # fmt: skip
        woke = self.stop_running(g, p, "preempted")
        self.sched_at(p, woke + self.schedule_pass())

    def stop_running(self, g: int, p: int, why: str, for_stw: bool = False, own: bool = False) -> int:
        """goschedImpl (Gosched, gopreempt_m): the running G stops where it is, to the global queue.

        Preempted FOR_STW (gcwaiting: stopTheWorld's preemptall), it stays on its P's runnext
        "so it can keep running immediately after the STW" (Go 1.26 on; before, the global queue). Then wakep, as goschedImpl ends
        (with an idle P and no spinning M another M comes for what waits; none during a stop).
        OWN: the G's own YIELD op (a point of its program, where a replay may know the wake-up).
        Returns the ns that wakep's futex wake takes the M before it calls schedule() (0 if it
        woke nobody): goschedImpl wakes the thread with the G already on the global queue, and
        only then schedules, so meanwhile the woken M (or anyone) may take the G.
        """
        self.gpreempt[g] = 0
        if self.in_stall(g):
            # Stopped for a stop-the-world mid-stall: the real stop waited for the thread to run
            # again, so its stall was over by the time the G stopped (the traced stop's length
            # holds that wait); the G goes on after it.
            self.gpc[g] += 1
            self.grem[g] = -1
        elif self.grem[g] >= 0:
            self.grem[g] -= self.now - self.grun_start[g]
        self.ggen[g] += 1
        self.gstatus[g] = GS_RUNNABLE
        self.pg[p] = -1
        self.rec.state(LG, g, self.now, G_RUNNABLE)
        self.rec.state(LP, p, self.now, P_RUN, m=self.pm[p])
        self.rec.state(LM, self.pm[p], self.now, M_RUN, p=p)
        self.gflow[g] = self.rec.flow(F_REQUEUE, g, g, p, self.now, self.rec.sid(why))
        if for_stw and self.stw_runnext:
            self.pol.enqueue(self, p, g, True)
        else:
            self.globrunqput(g)
        if self.wakep(self.readying(g) if own else None):
            return self.waker_cost()
        return 0

    # ---- stop the world ---------------------------------------------------------------------

    def stop_the_world(self, i: int, keeper: int) -> None:
        """stopTheWorldWithSema: every other running G to the global queue, every other P stopped.

        KEEPER is the P of the G that stops the world (-1 for a stop no G of the program
        made): it keeps its P and runs on through the stop, as the caller does.
        """
        if self.stw_active:  # another stop holds worldsema: this one follows it
            self.stw_waiting.append((i, self.pg[keeper] if keeper >= 0 else -1))
            return
        _t, dur, reason = self.prog.stw[i]
        caller = self.pg[keeper] if keeper >= 0 else -1
        if _MARK_TERMINATION in reason:
            # gcMarkDone, under worldsema, asks every P to flush its write barrier buffer and
            # work at a safe point (forEachP) before it stops the world for mark termination.
            self.for_each_p(caller)
        self.stw_active = True
        self.stw_keeper = keeper
        self.stw_caller = caller
        self.rec.state(LSTW, 0, self.now, int(State.STW), label=self.rec.sid(reason))
        for p in range(self.procs):
            if p == keeper:
                continue
            if self.pstatus[p] == PS_RUN:
                g = self.pg[p]
                if g >= 0:
                    # preemptall: the G stops in gopreempt_m -> goschedImpl(gp, true), which the
                    # trace records as a "preempted" GoStop, as it does sysmon's.
                    self.stop_running(g, p, "preempted", for_stw=True)
                if self.spinning[p]:
                    self.spinning[p] = False
                    self.nmspinning -= 1
                self.pidleput(p)
            elif self.pstatus[p] == PS_IDLE:
                self.rec.state(LP, p, self.now, P_STOP)
            # a P in a syscall is taken at the syscall's exit (its G finds no P)
        self.push(self.now + dur, EV_STW_END, i)

    def start_the_world(self, i: int) -> None:
        self.stw_active = False
        self.rec.end(LSTW, 0, self.now)
        self.wake_sysmon()  # startTheWorldWithSema wakes a sysmon that waited out the stop
        if i in self.prog.resize:
            self.procresize(self.prog.resize[i])
        self.stw_keeper = -1
        for p in self.pidle:
            self.rec.state(LP, p, self.now, P_IDLE)
        for p in range(self.procs - 1, -1, -1):
            if (self.runq[p] or self.runnext[p] >= 0) and p in self.pidle:
                self.pidle.remove(p)
                self.npidle -= 1
                self.startm(p, False, self.wake_delay())
        self.wakep_for_global()
        self.wakep()
        if _MARK_TERMINATION in self.prog.stw[i][2]:
            # gcMarkTermination, once the world runs again and still holding worldsema, has every
            # P flush its mcache (forEachP(waitReasonFlushProcCaches, ...)) before the next cycle.
            self.for_each_p(self.stw_caller)
        self.stw_caller = -1
        if self.stw_waiting:
            j, g = self.stw_waiting.popleft()
            self.stop_the_world(j, self.gp[g] if g >= 0 and self.gstatus[g] == GS_RUNNING else -1)

    # ---- forEachP: GC's ragged barrier -------------------------------------------------------

    def for_each_p(self, caller: int) -> None:
        """forEachP: every P but CALLER's (a G; -1: none) runs a function at its next safe point.

        forEachPInternal: preemptall (each running G stops, "preempted", to the global queue:
        gopreempt_m, not a stop-the-world's runnext), idle Ps run it at once, a P in a syscall
        is handed off (setBlockOnExitSyscall, takeP, handoffp); then, until every P has run it
        (its M in schedule(), or the P going idle or into a syscall), every
        ``safepoint_repreempt_ns`` preemptall again, which preempts every running G, those on
        Ps that ran it already too. Simplified: the caller's G runs on meanwhile (the real one
        sleeps in notetsleep, its time in its replayed CPU), but off its CPU while it waits, for
        the machine's CPUs (ms_on_cpu).
        """
        self.safepoint_epoch += 1
        self.safepoint_caller = caller
        self.safepoint_wait = {p for p in range(self.procs) if self.pstatus[p] == PS_RUN and not (
            caller >= 0 and self.pg[p] == caller)}  # fmt: skip
        self.preemptall(caller, "forEachP")
        for p in range(self.procs):
            if self.pstatus[p] == PS_SYSCALL:
                g = self.pg[p]
                self.syscalltick[p] += 1
                self.rec.decision(self.now, p, "retake", f"P{p} from G{g}'s syscall",
                                  "forEachP: a P in a syscall is handed off to run the safe-point function",
                                  "leave the P with the syscall")  # fmt: skip
                self.handoffp(p)
        if self.safepoint_wait:
            self.push(self.now + self.c.safepoint_repreempt_ns, EV_SAFEPOINT, self.safepoint_epoch)
            if self.cpus and caller >= 0:
                self.cpu_freed()  # the caller's thread sleeps in notetsleep meanwhile: off its CPU

    def safepoint_tick(self) -> None:
        """forEachP's notetsleep timed out: preemptall again while some P has not run the function."""
        if self.stw_active:  # a stop stops every P (the real one waits for worldsema, held meanwhile)
            self.safepoint_wait.clear()
        self.safepoint_wait = {p for p in self.safepoint_wait if p < self.procs and self.pstatus[p] == PS_RUN}
        if not self.safepoint_wait:
            return
        self.preemptall(self.safepoint_caller, "forEachP, again")
        self.push(self.now + self.c.safepoint_repreempt_ns, EV_SAFEPOINT, self.safepoint_epoch)

    def preemptall(self, caller: int, why: str) -> None:
        """preemptall: preemptone on every running P but the caller's M (the caller's G: CALLER)."""
        for p in range(self.procs):
            g = self.pg[p]
            if self.pstatus[p] != PS_RUN or g < 0 or g == caller or self.gstatus[g] != GS_RUNNING:
                continue
            if self.in_stall(g):
                self.gpreempt[g] = self.gpreempt[g] or _BY_GC  # handled when the thread runs again
                continue
            self.gc_preempt(g, p, why)

    def gc_preempt(self, g: int, p: int, why: str) -> None:
        """GC's preemption of running G (forEachP's preemptall; not sysmon's, not counted as its)."""
        self.rec.decision(self.now, p, "preempt", f"G{g}", why, "let it run")
        woke = self.stop_running(g, p, "preempted")
        self.sched_at(p, woke + self.schedule_pass())

    def procresize(self, n: int) -> None:
        """procresize (startTheWorldWithSema): Ps from N on are destroyed, new ones start idle.

        A destroyed P's Gs go to the head of the global queue, its local queue from the
        tail and then its runnext (p.destroy), so the other Ps pick them up in order.
        """
        old = self.procs
        keeper = self.stw_keeper
        if keeper >= n and self.pstatus[keeper] == PS_RUN:
            # The caller's P goes away: it releases it and takes P0 (procresize's "acquirep(allp[0])").
            # (A replayed caller may have left its P during the stop: then there is nothing to
            # move, and the P goes with the other destroyed ones below.)
            g, m = self.pg[keeper], self.pm[keeper]
            self.pidle.remove(0)
            self.npidle -= 1
            self.pstatus[0], self.pg[0], self.pm[0] = PS_RUN, g, m
            self.pstatus[keeper], self.pg[keeper], self.pm[keeper] = PS_IDLE, -1, -1
            self.pidle.append(keeper)
            self.npidle += 1
            if g >= 0:
                self.gp[g] = 0
                self.rec.state(LG, g, self.now, G_RUN, p=0, m=m)
            self.rec.state(LP, 0, self.now, P_RUN, g=g, m=m)
            self.rec.state(LM, m, self.now, M_RUN, g=g, p=0)
        for p in range(old - 1, n - 1, -1):
            q = self.runq[p]
            while q:
                self.globq.appendleft(q.pop())
            if self.runnext[p] >= 0:
                self.globq.appendleft(self.runnext[p])
                self.runnext[p] = -1
            if p in self.pidle:
                self.pidle.remove(p)
                self.npidle -= 1
            self.pstatus[p] = PS_DEAD  # one in a syscall stays referenced by its M: its G finds no P
            self.refire_timers(p)  # p.destroy: timers.take moves them to a live P
            self.pg[p] = -1
            self.pm[p] = -1
            self.pepoch[p] += 1
            self.rec.state(LP, p, self.now, P_IDLE)  # the trace shows a destroyed P idle
        for p in range(old, n):
            self.pstatus[p] = PS_IDLE
            self.pidle.append(p)
            self.npidle += 1
            self.rec.state(LP, p, self.now, P_STOP)  # stopped until the loop below starts the world
        self.procs = n
        self.coprimes = coprimes(n)  # stealOrder.reset(nprocs)
        self.rec.gomaxprocs(self.now, n)

    # ---- schedtrace -------------------------------------------------------------------------

    def schedtrace_line(self) -> None:
        ms = (self.now - T_START) // 1_000_000
        runq = " ".join(str(len(self.runq[p])) for p in range(self.procs))  # t-h: runnext not counted
        ticks = " ".join(str(t) for t in self.schedtick)
        self.schedtrace.append(
            f"SCHED {ms}ms: gomaxprocs={self.procs} idleprocs={self.npidle} threads={self.mcount + 1} "
            f"spinningthreads={self.nmspinning} needspinning={int(self.needspinning)} idlethreads={len(self.midle)} "
            f"runqueue={len(self.globq)} [ {runq} ] schedticks=[ {ticks} ]"
        )

    # ---- checks (tests and --check) ---------------------------------------------------------

    def check_invariants(self) -> None:
        """No G in two places, queues within bounds, every live G somewhere; raises AssertionError-free errors."""
        from goblueprint.errors import GoblueprintError

        where: dict[int, str] = {}

        def put(g: int, place: str) -> None:
            if g in where:
                raise GoblueprintError(f"model invariant: G{g} both in {where[g]} and {place}")
            where[g] = place

        for p in range(len(self.runq)):  # dead Ps too: p.destroy emptied their queues
            if p >= self.procs and (self.runq[p] or self.runnext[p] >= 0 or self.ptimers[p]):
                raise GoblueprintError(f"model invariant: P{p} beyond GOMAXPROCS {self.procs} still has work")
            if len(self.runq[p]) > self.c.runq_size:
                raise GoblueprintError(
                    f"model invariant: P{p} local queue {len(self.runq[p])} > {self.c.runq_size}"
                )
            for g in self.runq[p]:
                put(g, f"P{p} runq")
            if self.runnext[p] >= 0:
                put(self.runnext[p], f"P{p} runnext")
            if self.pg[p] >= 0:
                put(self.pg[p], f"P{p} running")
            if self.held[p] >= 0:
                put(self.held[p], f"P{p}'s M, paying a thread wake-up")
        for g in self.globq:
            put(g, "global queue")
        for g in range(1, len(self.gtmpl)):
            st = self.gstatus[g]
            if st == GS_RUNNABLE and g not in where and g not in self.netready:
                raise GoblueprintError(f"model invariant: runnable G{g} is in no queue")
            if st in (GS_WAITING, GS_DEAD) and g in where:
                raise GoblueprintError(
                    f"model invariant: {('waiting', 'dead')[st == GS_DEAD]} G{g} in {where[g]}"
                )
        alive = sum(1 for s in self.gstatus[1:] if s != GS_DEAD)
        if alive != self.live or self.created - self.live != sum(1 for s in self.gstatus[1:] if s == GS_DEAD):
            raise GoblueprintError("model invariant: goroutines not conserved")
        if self.npidle != len(self.pidle) or any(self.pstatus[p] != PS_IDLE for p in self.pidle):
            raise GoblueprintError("model invariant: idle P list and P states disagree")
        for p in range(self.procs):
            if self.pstatus[p] == PS_RUN and self.pm[p] < 0:
                raise GoblueprintError(f"model invariant: P{p} running without an M")
            if self.pstatus[p] == PS_IDLE and (
                self.pg[p] >= 0 or (not self.stw_active and (self.runq[p] or self.runnext[p] >= 0))
            ):
                # pidleput throws on a non-empty run queue; only a stopped world keeps its Ps' queues.
                # An idle P's work is seen by no one: stealWork and checkRunqsNoP skip idle Ps.
                raise GoblueprintError(f"model invariant: idle P{p} holds work")
        if self.nmspinning != sum(self.spinning) or self.nmspinning < 0:
            raise GoblueprintError("model invariant: spinning count")
