"""The Go-side reference for timeline tests.

``goref/main.go`` reads a trace with Go's own ``internal/trace`` and prints every
event plus Go's per-goroutine summary as JSON lines.  It must be built inside a
copy of GOROOT (internal packages), so the first use copies GOROOT into the
cache, builds ``cmd/goref`` there and keeps only the binary, keyed by Go version
and the hash of main.go.  ``FakeEvent`` replays those events through the same
attribute/method names as ``goblueprint.trace.events.Event``, so the analyses
can be checked against Go's numbers independently of the Python trace reader.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from goblueprint import toolchain
from goblueprint.toolchain.cachelock import publish

# The value types are the reader's own (plain NamedTuples); only the events come from Go.
from goblueprint.trace.events import (
    Label,
    Log,
    Metric,
    Range,
    RangeAttribute,
    Region,
    ResourceID,
    StackFrame,
    StateTransition,
    Task,
)

HERE = Path(__file__).parent
SOURCE = HERE / "goref" / "main.go"


def goref_binary(tc: toolchain.Toolchain | None = None, source: Path = SOURCE, name: str = "goref") -> Path:
    """Build SOURCE as GOROOT/src/cmd/NAME of a GOROOT copy (it imports internal/trace)."""
    tc = tc or toolchain.find()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    out_dir = toolchain.cache_dir() / "timeline-goref" / f"{tc.version}-{digest}-{name}"

    def compile_into(tmp: Path) -> None:
        goroot = tmp / "goroot"
        shutil.copytree(tc.goroot, goroot, symlinks=True)
        pkg = goroot / "src" / "cmd" / name
        pkg.mkdir()
        shutil.copy(source, pkg / "main.go")
        env = tc.env({"GOROOT": str(goroot), "GOFLAGS": ""})
        subprocess.run(
            [str(goroot / "bin" / "go"), "build", "-o", str(tmp / name), "."],
            cwd=pkg, env=env, check=True, capture_output=True,
        )  # fmt: skip
        shutil.rmtree(goroot)

    return publish(out_dir, compile_into, ready=lambda: (out_dir / name).exists()) / name


@dataclass(frozen=True)
class Stack:
    id: int
    _frames: tuple[StackFrame, ...] = ()

    def frames(self) -> list[StackFrame]:
        return list(self._frames)

    def __bool__(self) -> bool:
        return bool(self._frames)


class Sync(NamedTuple):
    n: int
    clock_snapshot: Any = None
    experimental_batches: Any = None


@dataclass(slots=True)
class FakeEvent:
    """Same surface as goblueprint.trace.events.Event, filled from goref's JSON.  RECORD is the
    event's JSON line, parsed when a method asks for it (or, in synthetic tests, its dict): a
    test session holds Go's events of several traces, and a 600,000-event trace's held as
    parsed records took 600 MB."""

    kind: int
    time: int
    goroutine: int
    proc: int
    thread: int
    stack: Stack
    record: dict[str, Any] | str = field(repr=False, default_factory=dict)
    stacks: dict[int, Stack] = field(repr=False, default_factory=dict)

    @property
    def raw(self) -> dict[str, Any]:
        r = self.record
        return json.loads(r) if isinstance(r, str) else r

    def state_transition(self) -> StateTransition:
        r = self.raw
        return StateTransition(
            ResourceID(r["rk"], r["rid"]), r["reason"], self.stacks[r["ss"]], r["old"], r["new"]
        )

    def range(self) -> Range:
        r = self.raw
        return Range(r["name"], ResourceID(r["rk"], r["rid"]))

    def range_attributes(self) -> list[RangeAttribute]:
        return [RangeAttribute(n, v) for n, v in self.raw.get("attrs") or []]

    def task(self) -> Task:
        r = self.raw
        return Task(r["id"], r["parent"], r["type"])

    def region(self) -> Region:
        r = self.raw
        return Region(r["task"], r["type"])

    def log(self) -> Log:
        r = self.raw
        return Log(r["task"], r["category"], r["message"])

    def metric(self) -> Metric:
        r = self.raw
        return Metric(r["name"], r["value"])

    def label(self) -> Label:
        r = self.raw
        return Label(r["label"], ResourceID(r["rk"], r["rid"]))

    def sync(self) -> Sync:
        return Sync(self.raw["n"])


@dataclass
class Reference:
    events: list[FakeEvent]
    summaries: dict[int, dict[str, Any]]
    error: str | None


def reference(trace: Path, tc: toolchain.Toolchain | None = None) -> Reference:
    """Go's view of a trace: its events and its goroutine summaries."""
    binary = goref_binary(tc)
    cache = toolchain.cache_dir() / "timeline-goref" / "out"
    # Keyed by the helper's build (its directory names the Go release and main.go's hash) and
    # the trace's bytes: the same wherever the cache lives.
    key = hashlib.sha256(binary.parent.name.encode() + b"\0" + trace.read_bytes()).hexdigest()[:20]
    cached = cache / f"{key}.jsonl"

    def run_goref(tmp: Path) -> None:
        proc = subprocess.run([str(binary), str(trace)], capture_output=True, check=True)
        tmp.write_bytes(proc.stdout)

    publish(cached, run_goref)
    stacks: dict[int, Stack] = {0: Stack(0)}
    events: list[FakeEvent] = []
    summaries: dict[int, dict[str, Any]] = {}
    error = None
    for line in cached.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if "stack" in rec and "frames" in rec:
            stacks[rec["stack"]] = Stack(rec["stack"], tuple(StackFrame(**f) for f in rec["frames"]))
        elif "summary" in rec:
            summaries[rec["summary"]["id"]] = rec["summary"]
        elif "error" in rec:
            error = rec["error"]
        else:
            events.append(
                FakeEvent(rec["k"], rec["t"], rec["g"], rec["p"], rec["m"], stacks[rec["s"]], line, stacks)
            )
    return Reference(events, summaries, error)


METRICS_SOURCE = HERE / "gometrics" / "main.go"


def go_metrics(trace: Path, windows: list[int], flag_sets: list[int]) -> dict[str, Any]:
    """Go's MutatorUtilizationV2 + MMU per flag set, and go tool trace's task/region durations."""
    binary = goref_binary(source=METRICS_SOURCE, name="gometrics")
    argv = [str(binary), str(trace), ",".join(map(str, windows)), *map(str, flag_sets)]
    return json.loads(subprocess.run(argv, capture_output=True, check=True).stdout)


# Traces every differential test runs on: the scheduler mix, in the oldest and the newest format.
TRACES = [("sched", "1.27"), ("sched", "1.22")]
# More releases for the cheap comparisons (summary, spans): every trace format change since 1.22.
MORE_TRACES = [*TRACES, ("sched", "1.23"), ("sched", "1.25"), ("sched", "1.26")]
