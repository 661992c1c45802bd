"""The capture hook: run the program under ``perf record`` and decode what it saw.

``capture`` calls :func:`start` with the program's argv before it starts the
program and runs the argv it gets back; after the program exited it calls
``finish()``.  Where perf cannot record (no binary, perf_event_paranoid, a
container, a missing tracepoint) ``start`` says so in one note and hands the
argv back unchanged: the rest of the capture goes on.

Files written next to trace.out:

* ``kernel.data``            perf's own recording (``perf script -i kernel.data`` reads it)
* ``kernel_events.parquet``  the program's events, decoded (goblueprint.kernel.decode.EVENTS_SCHEMA)
* ``kernel.json``            what was recorded: pid, perf version, events, lost records, problems
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goblueprint.errors import GoblueprintError
from goblueprint.kernel import decode, perf

DATA = "kernel.data"
EVENTS = "kernel_events.parquet"
META = "kernel.json"
PID_FILE = "kernel.pid"
# perf runs this shell, which writes its own pid and execs the program: the pid
# stays the program's, and the decoder can tell its threads from everyone else's.
_PID_WRAPPER = 'echo $$ > "$0" && exec "$@"'


@dataclass
class KernelRecording:
    out_dir: Path
    argv: list[str]
    notes: list[str]
    perf: str | None = None
    events: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.perf is not None

    def finish(self) -> dict[str, Any] | None:
        """Decode the recording into kernel_events.parquet and kernel.json; None if nothing was recorded."""
        if self.perf is None:
            return None
        out = self.out_dir
        pid_path = out / PID_FILE
        meta: dict[str, Any] = {
            "perf": self.perf,
            "perf_version": perf.version(self.perf),
            "clock": "CLOCK_MONOTONIC",
            "events": self.events,
            "problems": self.problems,
            "files": {"data": DATA, "events": None},
        }
        try:
            pid = int(pid_path.read_text().strip())
        except (OSError, ValueError):
            pid = None
        pid_path.unlink(missing_ok=True)
        meta["pid"] = pid
        if pid is None or not (out / DATA).exists():
            meta["error"] = "perf did not start the program; no kernel events"
        else:
            try:
                events, lost = decode.decode(self.perf, out / DATA, pid)
            except GoblueprintError as exc:
                meta["error"] = f"kernel.data could not be decoded: {exc}"
            else:
                events.write_parquet(out / EVENTS)
                meta["files"]["events"] = EVENTS
                meta["lost_records"] = lost
                meta["rows"] = events.height
                meta["error"] = None
                if lost:
                    meta["problems"].append(f"perf lost {lost} chunks of events: kernel intervals have gaps")
        (out / META).write_text(json.dumps(meta, sort_keys=True, indent=2) + "\n")
        if meta["error"]:
            self.notes.append(f"kernel: {meta['error']}")
        else:
            self.notes.append(
                f"kernel: {meta['rows']} events of pid {pid} in {EVENTS} ({len(self.events)} tracepoints)"
            )
        self.notes.extend(meta["problems"])
        return meta


def start(
    out_dir: Path, argv: list[str], *, locks: bool = False, perf_binary: str | None = None, notes: list[str]
) -> KernelRecording:
    """Probe perf and wrap ARGV in perf record; on any problem, one note and ARGV unchanged."""
    for stale in (DATA, EVENTS, META, PID_FILE):
        (out_dir / stale).unlink(missing_ok=True)
    found = perf.probe(perf_binary, locks=locks)
    rec = KernelRecording(out_dir, list(argv), notes, problems=list(found.problems))
    if not found.ok or found.perf is None:
        notes.extend(found.problems)
        return rec
    rec.perf = found.perf
    rec.events = found.events
    rec.argv = [
        *perf.record_command(found.perf, found.events, out_dir / DATA),
        "--",
        "/bin/sh",
        "-c",
        _PID_WRAPPER,
        str(out_dir / PID_FILE),
        *argv,
    ]
    return rec
