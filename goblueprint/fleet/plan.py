"""Which traces a batch covers, and the one task each of them gets.

Patterns name traces three ways, in the order given (duplicates kept once):

* an existing directory: its ``*.trace`` and ``*.out`` files, not its subdirectories
  (Go's ``go test -trace`` writes ``trace.out``; goblueprint's own captures ``.trace``);
* a pattern with glob characters (``*``, ``?``, ``[``): the files it matches, ``**``
  crossing directories; one that matches no file is an error, not an empty batch;
* anything else: that file, which must exist.

Each pattern's files are sorted by name, so a batch is the same list on every run.

A trace's task (``ingest_task``) runs in a worker process, local or remote: it
ingests the file (``timeline.ingest``, which skips a trace whose sound tables are
already stored) and returns plain data only, so any backend can carry it back.
A trace that Go's reader rejects is a result too, with its error and offset: one
broken file never stops the others.
"""

from __future__ import annotations

import glob
import os
import resource
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from goblueprint.errors import UsageError

TRACE_SUFFIXES = (".trace", ".out")
_GLOB_CHARS = frozenset("*?[")


def expand(patterns: list[str]) -> list[str]:
    """The trace files PATTERNS name (see the module doc), as the user spelled their paths."""
    from goblueprint.cli._paths import input_dir, input_file

    found: list[str] = []
    for pattern in patterns:
        if _GLOB_CHARS & set(pattern):
            matches = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
            if not matches:
                raise UsageError(f"no file matches {pattern}")
            found.extend(matches)
        elif os.path.isdir(pattern):
            d = input_dir(pattern)
            inside = sorted(str(p) for p in d.iterdir() if p.suffix in TRACE_SUFFIXES and p.is_file())
            if not inside:
                raise UsageError(f"no {' or '.join('*' + s for s in TRACE_SUFFIXES)} file in {pattern}")
            found.extend(inside)
        else:
            found.append(str(input_file(pattern)))
    seen: set[str] = set()
    unique = []
    for name in found:
        key = os.path.realpath(name)
        if key not in seen:
            seen.add(key)
            unique.append(name)
    return unique


@dataclass
class TraceResult:
    """What one trace's task hands back: where its tables are, or why there are none.

    ``error``/``offset`` are set for a trace Go's reader rejects (no tables) and for one
    that breaks part-way (tables of the events before the failure).
    """

    trace: str  # the path as the batch named it: the trace's id in every table
    content: str | None = None  # BLAKE2b of the file: the ingest entry's key
    go_version: str | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    events: int = 0
    bytes: int = 0
    tables: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    offset: int | None = None
    # Where and at what cost the task ran: for progress lines and the bench's RSS per worker.
    pid: int = 0
    max_rss_kb: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def ingest_task(trace: str, path: str, force: bool = False) -> dict[str, Any]:
    """Ingest the file PATH, named TRACE in the batch (or find it ingested): a plain dict,
    picklable by every backend.  PATH is absolute, for workers whose directory is not ours."""
    from goblueprint.errors import GoblueprintError, PathError, TraceError
    from goblueprint.timeline.ingest import ingest

    t0 = time.perf_counter()
    res = TraceResult(trace=trace)
    try:
        res.bytes = os.stat(path).st_size
        found = ingest(path, force=force)
    except TraceError as exc:  # rejected before any usable event: nothing stored
        res.error, res.offset = _first_line(exc.message), exc.offset
    except GoblueprintError as exc:  # unreadable file and the like: its one line
        res.error = str(exc)
    except OSError as exc:  # gone or unreadable since the batch listed it
        res.error = str(PathError.from_os(trace, exc))
    else:
        m = found.manifest
        res.content = m["content"]
        res.go_version = m["go_version"]
        res.start_ns = m["timeline"]["start_ns"]
        res.end_ns = m["timeline"]["end_ns"]
        res.events = found.events_read
        res.tables = {name: str(path) for name, path in found.table_files().items()}
        err = found.error
        if err is not None:  # partial: its tables stand, and the failure is still reported
            res.error, res.offset = _first_line(err.message), err.offset
    res.pid = os.getpid()
    res.max_rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res.seconds = round(time.perf_counter() - t0, 6)
    return res.as_dict()


def _first_line(message: str) -> str:
    # Some of Go's messages carry a dump of the reader's state on further lines
    # (cli._partial.finish keeps the first line too).
    return (message.splitlines() or [""])[0]


def results(dicts: list[dict[str, Any]], order: list[str]) -> list[TraceResult]:
    """Task outputs back as TraceResults in the batch's ORDER (backends finish in any order)."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted((TraceResult(**d) for d in dicts), key=lambda r: rank[r.trace])


def describe(res: TraceResult) -> str:
    """One line for a trace's failure, as stderr and the failures table word it."""
    where = f" (offset {res.offset})" if res.offset is not None else ""
    partial = f"; its tables hold the {res.events} events before it" if res.tables else ""
    return f"{res.trace}: {res.error}{where}{partial}"
