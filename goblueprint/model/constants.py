"""The scheduler's constants, read from a release's source (never typed in twice).

The lab's knob finder (goblueprint.lab.knobs) already locates forcePreemptNS,
sysmon's sleeps, the 61st-tick fairness check, stealTries and the spinning factor
in the runtime's AST with file:line; the model takes its values from there, so
another release's source gives another model.  The run-queue size is the length
of ``p.runq`` in runtime2.go (its half is the overflow batch and the cap of a
global-queue batch, as in runqputslow and findRunnable).

What the source cannot give are the machine's costs (how long a thread takes to
wake, one pass of schedule()); those are the model's own calibration, listed
separately in ``Costs`` so nobody mistakes them for the runtime's.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from goblueprint.errors import UsageError

_RUNQ = re.compile(r"^\s*runq\s+\[(\d+)\]guintptr", re.M)


@dataclass(frozen=True)
class Constants:
    """The runtime's scheduler constants (names are the lab's knob names where there is one)."""

    # No defaults: each value comes from from_source() (or a test that states its own).
    forcePreemptNS: int
    sysmon_min_sleep_us: int
    sysmon_max_sleep_us: int
    sysmon_idle_ticks: int
    global_queue_tick: int
    steal_tries: int
    spinning_factor: int
    runnext_inherits_time: bool
    runq_size: int
    # sysmon polls the network if nobody has for this long (proc.go: 10*1000*1000).
    netpoll_interval_ns: int = 10_000_000
    # A P in a syscall is left alone this long when nothing else waits (retake).
    syscall_retake_ns: int = 10_000_000
    # runqgrab sleeps this long before taking a running P's runnext (usleep(3) in proc.go), so
    # the P that readied it usually runs it first (the OS adds Costs.timer_slack_ns); the knob
    # finder does not read it yet.
    runnext_steal_wait_ns: int = 3_000
    # sysmon, while every P is idle, sleeps until the next timer but at most forcegcperiod/2
    # (proc.go: var forcegcperiod int64 = 2 * 60 * 1e9).
    sysmon_wait_max_ns: int = 60_000_000_000
    # forEachP, while a P has not yet run its safe-point function, sleeps this long and then
    # preempts every running P again (forEachPInternal: notetsleep(&sched.safePointNote,
    # 100*1000), then preemptall(); the same in Go 1.22 to 1.27).
    safepoint_repreempt_ns: int = 100_000
    go_version: str = ""
    sites: tuple[tuple[str, str], ...] = ()  # (name, "file:line") where each value was found

    def with_knobs(self, settings: dict[str, str]) -> Constants:
        """A copy with lab knob settings (NAME -> text, as lab.knobs.parse_settings returns)."""
        changes: dict[str, Any] = {}
        names = {f.name: f for f in fields(self)}
        for name, text in settings.items():
            if name not in names:
                raise UsageError(f"the model has no knob {name!r}")
            changes[name] = (text == "true") if name == "runnext_inherits_time" else int(text)
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["sites"] = dict(self.sites)
        return out


@dataclass(frozen=True)
class Costs:
    """Machine costs the source does not state: the model's calibration (ns)."""

    # One pass of schedule()/findRunnable with work at hand (a replay draws the trace's own: model.schedpass).
    schedule_ns: int = 100
    wake_m_ns: int = 8_000  # futex wake of a parked thread until it runs schedule()
    steal_ns: int = 500  # one stealWork round over the Ps
    # What waking a thread costs the M that wakes it from the scheduler (startm's notewakeup,
    # a FUTEX_WAKE syscall): 3.5 µs median enter-to-exit in perf's syscalls:sys_*_futex
    # records of the sched program here (docs/model.md, "What a wake-up costs the waker").
    waker_ns: int = 3_500
    exitsyscall_ns: int = 200
    # How much later than asked the OS ends a timed sleep: Linux's default timer slack for a
    # SCHED_OTHER thread (prctl PR_SET_TIMERSLACK, 50 µs), given to every nanosleep and timed
    # futex wait. So runqgrab's usleep(3) lasts ~53 µs (52-58 µs in perf's sched_switch records
    # of the sched program here) and sysmon's usleep(20) ~70 µs, not 20 (its hrtimer's
    # expires - softexpires is 50 µs in perf's timer:hrtimer_start records; docs/model.md).
    timer_slack_ns: int = 50_000
    # Wake-ups of threads for readied work drawn from these instead (e.g. a trace's measured
    # ones, model.wakeups); empty: wake_m_ns. Not the default: see docs/model.md.
    wake_m_samples_ns: tuple[int, ...] = ()
    # With the machine's CPUs modelled (Sim's cpus), the longest a woken thread waits for one
    # before the OS runs it anyway: Linux's EEVDF base slice (sysctl_sched_base_slice, 0.75 ms
    # scaled by 1 + log2 of the CPUs: 1.5 ms on 2), which the running thread may finish first.
    cpu_slice_ns: int = 1_500_000


def from_source(go: str | None = None) -> Constants:
    """The constants of release GO's runtime (the bundled toolchain by default)."""
    from goblueprint.lab import knobs
    from goblueprint.source import facts

    root = facts.resolve(go=go)
    values: dict[str, Any] = {}
    sites: list[tuple[str, str]] = []
    for knob in knobs.read(root):
        if knob["missing"] or knob["value"] is None:
            raise UsageError(
                f"Go {root.version}: the model needs {knob['name']}: {knob['missing'] or 'ambiguous'}"
            )
        text = str(knob["value"])
        values[knob["name"]] = text == "true" if knob["type"] == "bool" else int(text)
        site = knob["sites"][0]
        sites.append((knob["name"], f"{site['file']}:{site['line']}"))
    runtime2 = root.path / "src" / "runtime" / "runtime2.go"
    try:
        text = runtime2.read_text()
    except OSError as exc:
        raise UsageError(f"cannot read {runtime2}: {exc.strerror}") from None
    found = _RUNQ.search(text)
    if found is None:
        raise UsageError(f"Go {root.version}: no p.runq array in {runtime2}")
    values["runq_size"] = int(found.group(1))
    sites.append(("runq_size", f"src/runtime/runtime2.go:{text.count(chr(10), 0, found.start()) + 1}"))
    return Constants(**values, go_version=root.version, sites=tuple(sites))
