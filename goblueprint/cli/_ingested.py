"""A trace's ingested tables for the commands that read them (timeline.ingest), made on first use."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from goblueprint.cli._paths import input_file

if TYPE_CHECKING:
    from goblueprint.timeline.ingest import Ingested
    from goblueprint.timeline.model import Timeline
    from goblueprint.trace.reader import Reader


def ingested_trace(name: str | os.PathLike[str]) -> Ingested:
    """The trace file NAME's stored tables: read from the cache, or made now with a progress bar.

    The C heap's free pages are given back before the view goes on: a first run's ingest freed
    most of what it held, but glibc keeps those pages, and the view's own work stood on them
    (Perfetto's first run of a 46 MB trace started its export at 226 MB, a second run at ~120)."""
    from goblueprint.timeline.heap import give_back
    from goblueprint.timeline.ingest import ingest
    from goblueprint.trace.progress import progress

    path = input_file(name)
    with progress(f"ingesting {path.name}", unit="events") as advance:
        found = ingest(path, progress=advance)
    give_back()
    return found


def trace_timeline(
    name: str | os.PathLike[str], *, show_capture: bool = False
) -> tuple[Timeline, Ingested | Reader]:
    """The Timeline of the trace file NAME and what read it (its ``error`` and ``events_read``
    are the ones ``cli._partial.finish`` reports).

    From the ingested tables, unless SHOW_CAPTURE asks for what they leave out: then one pass.
    """
    if show_capture:
        from goblueprint.cli._partial import open_input_trace
        from goblueprint.timeline.model import build_timeline

        reader = open_input_trace(name)
        return build_timeline(reader, show_capture=True), reader
    found = ingested_trace(name)
    return found.timeline(), found
