"""Reading the output of GODEBUG=schedtrace=MS[,scheddetail=1] as data.

The runtime prints one ``SCHED`` line every MS milliseconds (runtime/proc.go,
``schedtrace``); with ``scheddetail=1`` the line carries four more counters and
is followed by one line per P, per M and per G.  The fields differ by release:

* ``needspinning=`` appeared in Go 1.21;
* the per-P run-queue list is ``[1 0 0]`` in Go 1.21–1.23 and ``[ 1 0 0 ]`` with a
  ``schedticks=[ … ]`` list after it in 1.25–1.27 (non-detailed mode only).

So the parser reads ``key=value`` pairs and bracketed lists by name rather
than by position, and every key a release does not print is None.  It does no
I/O: it takes the text and returns plain records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from goblueprint.errors import CaptureError

# Counters of the SCHED line, in the order the runtime prints them; the JSON
# schema names them the same way.
SCHED_COUNTERS = (
    "gomaxprocs",
    "idleprocs",
    "threads",
    "spinningthreads",
    "needspinning",
    "idlethreads",
    "runqueue",
)
# Printed only with scheddetail=1.
DETAIL_COUNTERS = ("gcwaiting", "nmidlelocked", "stopwait", "sysmonwait")

_SCHED_HEAD = re.compile(r"SCHED (\d+)ms:")
# key=value where value is a bracketed list or a token; a bare "[…]" list is the
# per-P run-queue lengths (it has no key of its own).
_TOKEN = re.compile(r"\s*(?:(\w+)=)?(\[[^\]]*\]|[^\s\[\]]+)")
_P_LINE = re.compile(
    r"  P(\d+): status=(\d+) schedtick=(\d+) syscalltick=(\d+) m=(\d+|nil) runqsize=(\d+) "
    r"gfreecnt=(\d+) timerslen=(\d+)$"
)
# preemptoff is a free-text reason (empty, or e.g. "gcing"); it may hold spaces.
_M_LINE = re.compile(
    r"  M(\d+): p=(\d+|nil) curg=(\d+|nil) mallocing=(\d+) throwing=(\d+) preemptoff=(.*?) "
    r"locks=(\d+) dying=(\d+) spinning=(true|false) blocked=(true|false) lockedg=(\d+|nil)$"
)
# The wait reason is free text in parentheses ("chan receive", "GC worker (idle)").
_G_LINE = re.compile(r"  G(\d+): status=(\d+)\((.*)\) m=(\d+|nil) lockedm=(\d+|nil)$")

# Status numbers of runtime2.go, for display only (the JSON keeps the numbers).
P_STATUS = {0: "idle", 1: "running", 2: "syscall", 3: "gcstop", 4: "dead"}
G_STATUS = {
    0: "idle",
    1: "runnable",
    2: "running",
    3: "syscall",
    4: "waiting",
    6: "dead",
    8: "copystack",
    9: "preempted",
}


@dataclass
class Sample:
    """One SCHED line with the detail lines that followed it."""

    t_ms: int
    counters: dict[str, int | bool | None]
    local_runq: list[int] | None = None
    schedticks: list[int] | None = None
    procs: list[dict[str, Any]] | None = None
    ms: list[dict[str, Any]] | None = None
    gs: list[dict[str, Any]] | None = None
    line: int = 0  # 1-based line number of the SCHED line, for messages

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t_ms": self.t_ms}
        for key in SCHED_COUNTERS + DETAIL_COUNTERS:
            out[key] = self.counters.get(key)
        out["local_runq"] = self.local_runq
        out["schedticks"] = self.schedticks
        out["procs"] = self.procs
        out["ms"] = self.ms
        out["gs"] = self.gs
        return out


@dataclass
class Schedtrace:
    samples: list[Sample] = field(default_factory=list)
    skipped_lines: int = 0  # foreign or damaged lines passed over in lenient mode
    # The log's last sample, cut by the program's exit while the runtime printed it (it writes
    # a line in pieces, and a scheddetail block line by line): left out, in either mode.
    cut_last_sample: bool = False

    @property
    def detailed(self) -> bool:
        return any(s.procs is not None for s in self.samples)

    def to_json(self) -> dict[str, Any]:
        return {"samples": [s.to_json() for s in self.samples]}


def is_schedtrace_line(line: str) -> bool:
    """True for lines the runtime's schedtrace prints (used to split a program's stderr)."""
    if line.startswith("SCHED "):
        # Every release's SCHED line goes on with gomaxprocs: a program's own "SCHED 5ms: …"
        # stays the program's. (A line the exit cut may stop anywhere in that word.)
        head = _SCHED_HEAD.match(line)
        rest = line[head.end() :].rstrip("\r\n") if head else None
        return rest is not None and (rest.startswith(" gomaxprocs=") or " gomaxprocs=".startswith(rest))
    if line.startswith("  P"):
        return _P_LINE.match(line.rstrip("\r\n")) is not None
    if line.startswith("  M"):
        return _M_LINE.match(line.rstrip("\r\n")) is not None
    if line.startswith("  G"):
        return _G_LINE.match(line.rstrip("\r\n")) is not None
    return False


def is_whole_runtime_line(line: str) -> bool:
    """True for a scheduler line read whole, to its end (a SCHED line every field of which
    reads): what may be split off a program's line it landed after."""
    line = line.rstrip("\r\n")
    if line.startswith("SCHED "):
        try:
            _parse_sched(line, 0)
        except CaptureError:
            return False
        return True
    return is_schedtrace_line(line)


def _int_or_none(text: str) -> int | None:
    return None if text == "nil" else int(text)


def _int_list(text: str, lineno: int) -> list[int]:
    try:
        return [int(x) for x in text[1:-1].split()]
    except ValueError as exc:
        raise CaptureError(f"line {lineno}: bad list {text!r} in schedtrace") from exc


def _parse_sched(line: str, lineno: int) -> Sample:
    head = _SCHED_HEAD.match(line)
    if head is None:  # callers check first; kept for a clear message
        raise CaptureError(f"line {lineno}: not a SCHED line: {line[:80]!r}")
    sample = Sample(t_ms=int(head.group(1)), counters={}, line=lineno)
    pos = head.end()
    end = len(line)
    while pos < end:
        match = _TOKEN.match(line, pos)
        if match is None or match.end() == pos:
            if line[pos:].strip():
                raise CaptureError(f"line {lineno}: cannot read {line[pos : pos + 40]!r} in SCHED line")
            break
        pos = match.end()
        key, value = match.group(1), match.group(2)
        if key is None:
            if not value.startswith("["):
                raise CaptureError(f"line {lineno}: unexpected {value!r} in SCHED line")
            sample.local_runq = _int_list(value, lineno)
        elif key == "schedticks":
            sample.schedticks = _int_list(value, lineno)
        elif key in SCHED_COUNTERS or key in DETAIL_COUNTERS:
            if value in ("true", "false"):  # gcwaiting and sysmonwait are atomic.Bool since Go 1.21
                sample.counters[key] = value == "true"
                continue
            try:
                sample.counters[key] = int(value)
            except ValueError as exc:
                raise CaptureError(f"line {lineno}: {key}={value!r} is not a number") from exc
        else:
            raise CaptureError(f"line {lineno}: unknown field {key!r} in SCHED line")
    if "gomaxprocs" not in sample.counters:
        raise CaptureError(f"line {lineno}: SCHED line without gomaxprocs")
    procs = sample.counters["gomaxprocs"]
    if sample.local_runq is not None and len(sample.local_runq) != procs:
        # schedtrace prints one length per P of allp, which holds gomaxprocs Ps under sched.lock.
        raise CaptureError(
            f"line {lineno}: {len(sample.local_runq)} run-queue lengths for gomaxprocs={procs} "
            "(the runtime prints one per P)"
        )
    return sample


def parse(text: str, *, lenient: bool = False) -> Schedtrace:
    """Parse schedtrace/scheddetail output.

    A line that is not the runtime's raises CaptureError naming its number,
    unless ``lenient`` (then it is counted in ``skipped_lines``): a raw stderr
    mixes the program's own lines with the scheduler's, sometimes inside one of its
    lines (the runtime writes a line in several writes), which is then skipped too.
    A SCHED line earlier in time than the one before it is another process's: an error, or
    skipped when lenient.  The program's exit can cut the log's last sample, which is then left out in either mode
    (``cut_last_sample``): an unterminated last line (every line the runtime finishes ends
    with a newline) that reads only without its last field, reads with fewer fields than the
    sample before it, or is the start of a P, M or G line; or a scheddetail SCHED line (one
    with the detail counters) whose P, M and G lines stop before one per P, an M and a G.
    """
    result = Schedtrace()
    current: Sample | None = None
    lines = text.splitlines()
    # Unterminated: the process ended while the runtime was writing the last line.
    cut_at = len(lines) if lines and not text.endswith(("\n", "\r")) else 0
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            if lineno == cut_at and current is not None:  # (the indent of a P, M or G line)
                _leave_out_last(result, current)
            continue
        if _beyond_64_bits(line):
            # The runtime prints no number past int64: not its line (and no table can hold it).
            if not lenient:
                raise CaptureError(
                    f"line {lineno}: a number beyond 64 bits, not a schedtrace line: {line[:80]!r}"
                )
            result.skipped_lines += 1
            if line.startswith("SCHED "):
                current = None  # that sample is lost, and its detail lines with it
            continue
        if line.startswith("SCHED ") and _SCHED_HEAD.match(line):
            try:
                current = _parse_sched(line, lineno)
            except CaptureError:
                if lineno == cut_at and _reads_before_its_end(line, lineno):
                    result.cut_last_sample = True
                    break
                if not lenient:
                    raise
                # The runtime writes a line in pieces, so the program's own stderr can land
                # inside one: that sample is lost (and its detail lines with it), not the run.
                result.skipped_lines += 1
                current = None
                continue
            if lineno == cut_at and _cut_short(current, result.samples):
                result.cut_last_sample = True
                break
            if result.samples and current.t_ms < result.samples[-1].t_ms:
                # A run's samples count up from its start: time going back is another process's
                # (logs joined, or a child that inherited GODEBUG writing to the same stderr),
                # which no series of one run can hold.  Lenient: that sample is passed over.
                if not lenient:
                    raise CaptureError(
                        f"line {lineno}: SCHED {current.t_ms}ms comes after SCHED "
                        f"{result.samples[-1].t_ms}ms (line {result.samples[-1].line}): time goes "
                        "back, so the log holds more than one process's lines"
                    )
                result.skipped_lines += 1
                current = None
                continue
            result.samples.append(current)
            continue
        detail = _parse_detail(line)
        if detail is not None and current is not None:
            kind, record = detail
            target = getattr(current, kind)
            if target is None:
                target = []
                setattr(current, kind, target)
            target.append(record)
            continue
        if lineno == cut_at and current is not None and line.startswith(_DETAIL_STARTS):
            _leave_out_last(result, current)  # a P, M or G line cut short
            break
        if lineno == cut_at and _HEAD_START.fullmatch(line):
            result.cut_last_sample = True  # a SCHED line cut before its first field
            break
        if lenient:
            result.skipped_lines += 1
            continue
        where = "before the first SCHED line" if detail is not None else "not a schedtrace line"
        raise CaptureError(f"line {lineno}: {where}: {line[:80]!r}")
    if current is not None and result.samples and result.samples[-1] is current:
        if not _detail_whole(current):  # the exit came between two of its lines
            _leave_out_last(result, current)
    return result


_LONG_NUMBER = re.compile(r"\d{19,}")
_INT64_MAX = (1 << 63) - 1


def _beyond_64_bits(line: str) -> bool:
    return any(int(digits) > _INT64_MAX for digits in _LONG_NUMBER.findall(line))


def _leave_out_last(result: Schedtrace, sample: Sample) -> None:
    if result.samples and result.samples[-1] is sample:
        result.samples.pop()
    result.cut_last_sample = True


def _detail_whole(sample: Sample) -> bool:
    """Whether SAMPLE has the P, M and G lines its SCHED line announces: scheddetail adds the
    detail counters to the SCHED line and then prints a line per P (gomaxprocs of them), per M
    and per G, all under the scheduler's lock, so a block stops early only at the log's end."""
    if not any(key in sample.counters for key in DETAIL_COUNTERS):
        return True
    procs = sample.procs or []
    return len(procs) == sample.counters["gomaxprocs"] and bool(sample.ms) and bool(sample.gs)


# Where a SCHED line's next field starts (a key, or a bracketed list of run queues).
_FIELD_START = re.compile(r" (?=[A-Za-z_\[])")
_DETAIL_STARTS = ("  P", "  M", "  G")
# What a SCHED line cut before its first field can be ("S" ... "SCHED 12ms:").
_HEAD_START = re.compile(r"S(?:C(?:H(?:E(?:D(?: (?:\d+(?:m(?:s:?)?)?)?)?)?)?)?)?\s*")


def _reads_before_its_end(line: str, lineno: int) -> bool:
    """Whether the SCHED line LINE reads once its last field, the one a cut left unfinished, is
    dropped (a field broken before that one is not a cut's doing); or is cut before any field."""
    starts = [m.start() for m in _FIELD_START.finditer(line)]
    prefix = line[: starts[-1]] if starts else line
    if _HEAD_START.fullmatch(prefix):
        return True
    try:
        _parse_sched(prefix, lineno)
    except CaptureError:
        return False
    return True


def _cut_short(sample: Sample, before: list[Sample]) -> bool:
    """Whether SAMPLE, read from an unterminated last line, lacks what the sample BEFORE it has."""
    if not before:
        return False
    last = before[-1]
    return set(sample.counters) < set(last.counters) or (
        sample.schedticks is None and last.schedticks is not None
    )


def _parse_detail(line: str) -> tuple[str, dict[str, Any]] | None:
    if line.startswith("  P"):
        m = _P_LINE.match(line)
        if m:
            return "procs", {
                "id": int(m.group(1)),
                "status": int(m.group(2)),
                "schedtick": int(m.group(3)),
                "syscalltick": int(m.group(4)),
                "m": _int_or_none(m.group(5)),
                "runqsize": int(m.group(6)),
                "gfreecnt": int(m.group(7)),
                "timerslen": int(m.group(8)),
            }
    elif line.startswith("  M"):
        m = _M_LINE.match(line)
        if m:
            return "ms", {
                "id": int(m.group(1)),
                "p": _int_or_none(m.group(2)),
                "curg": _int_or_none(m.group(3)),
                "mallocing": int(m.group(4)),
                "throwing": int(m.group(5)),
                "preemptoff": m.group(6),
                "locks": int(m.group(7)),
                "dying": int(m.group(8)),
                "spinning": m.group(9) == "true",
                "blocked": m.group(10) == "true",
                "lockedg": _int_or_none(m.group(11)),
            }
    elif line.startswith("  G"):
        m = _G_LINE.match(line)
        if m:
            return "gs", {
                "id": int(m.group(1)),
                "status": int(m.group(2)),
                "waitreason": m.group(3),
                "m": _int_or_none(m.group(4)),
                "lockedm": _int_or_none(m.group(5)),
            }
    return None
