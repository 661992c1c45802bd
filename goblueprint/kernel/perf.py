"""Finding perf and asking it, before the program runs, what it may record.

The probe is a real ``perf record`` of ``true`` with the same events and
options as the capture: permission (perf_event_paranoid, a container without
CAP_PERFMON), a missing tracepoint or a missing binary all show up there, and
the capture can go on without the kernel recording, saying which in one line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PERF_ENV = "GOBLUEPRINT_PERF"  # a perf binary to use instead of `perf` on PATH

SCHED_EVENTS = ("sched:sched_switch", "sched:sched_wakeup", "sched:sched_migrate_task")
# `perf lock record` records these two where the kernel has them (5.19+); they are
# kernel-internal lock contention, so the futex syscalls (the Go runtime's locks and
# notes) are recorded beside them.
LOCK_EVENTS = ("lock:contention_begin", "lock:contention_end")
FUTEX_EVENTS = ("syscalls:sys_enter_futex", "syscalls:sys_exit_futex")

# Options shared by the probe and the recording.  -a: a thread's switch *in* and the
# wake-ups and migrations done for it by other tasks are recorded in other tasks'
# contexts, which a per-task recording never sees; the program's threads are picked
# out when decoding.  -B/-N: no build-id pass over the samples at the end.
RECORD_OPTS = ("-a", "-k", "mono", "-q", "-B", "-N", "-m", "1024")
PROBE_TIMEOUT_S = 60.0


@dataclass
class Probe:
    """What perf may record here: the events that work and one line per thing that does not."""

    perf: str | None
    events: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.perf is not None and any(e in self.events for e in SCHED_EVENTS)


def find_perf(perf: str | None = None) -> str | None:
    """The perf binary: the one given, else $GOBLUEPRINT_PERF, else `perf` on PATH."""
    name = perf or os.environ.get(PERF_ENV) or "perf"
    if os.sep in name:
        return name if os.access(name, os.X_OK) and Path(name).is_file() else None
    return shutil.which(name)


def _try(perf: str, events: list[str]) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="goblueprint-perf-") as tmp:
        cmd = [perf, "record", *RECORD_OPTS, "-o", str(Path(tmp) / "probe.data")]
        for ev in events:
            cmd += ["-e", ev]
        try:
            proc = subprocess.run(
                [*cmd, "--", "true"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, str(exc)
    if proc.returncode == 0:
        return True, ""
    lines = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
    return False, _reason(lines)


def _reason(lines: list[str]) -> str:
    """perf's diagnosis, shortened to the line that names the cause."""
    for key in ("perf_event_paranoid", "Permission", "not permitted", "Access to performance", "unknown tracepoint",
                "event syntax error", "No permission"):  # fmt: skip
        for ln in lines:
            if key.lower() in ln.lower():
                return ln
    return lines[0] if lines else "perf record failed without a message"


def probe(perf: str | None = None, *, locks: bool = False) -> Probe:
    """Check each wanted event group once (all at once first: one perf run when all is well)."""
    binary = find_perf(perf)
    if binary is None:
        where = perf or os.environ.get(PERF_ENV) or "perf on PATH"
        return Probe(None, [], [f"kernel recording off: no perf binary ({where}); install linux-perf"])
    wanted = list(SCHED_EVENTS) + (list(LOCK_EVENTS) + list(FUTEX_EVENTS) if locks else [])
    ok, why = _try(binary, wanted)
    if ok:
        return Probe(binary, wanted)
    result = Probe(binary)
    groups = [SCHED_EVENTS] + ([LOCK_EVENTS, FUTEX_EVENTS] if locks else [])
    for group in groups:
        ok, why = _try(binary, list(group))
        if ok:
            result.events.extend(group)
        else:
            result.problems.append(f"kernel recording: {', '.join(group)} not recordable here: {why}")
    if not result.ok:
        result.problems.append("kernel recording off: the scheduler tracepoints cannot be recorded")
    return result


def record_command(perf: str, events: list[str], data: Path) -> list[str]:
    cmd = [perf, "record", *RECORD_OPTS, "-o", str(data)]
    for ev in events:
        cmd += ["-e", ev]
    return cmd


def version(perf: str) -> str:
    try:
        proc = subprocess.run([perf, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip()
