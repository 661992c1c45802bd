"""The lab records in the trace commands: ``--lab DIR`` of trace timeline/export/sql.

Each command keeps its own code; these functions are what it calls when ``--lab`` is
given (as goblueprint.kernel.views does for ``--kernel``), so the lab stays in this
package. The records carry the trace's clock, so they join the trace of the same run
(DIR/trace.out) as they are.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from goblueprint.timeline.model import Timeline


def records_of(directory: str) -> pl.DataFrame:
    """The folder's records as a frame; its messages (what was lost) go to stderr as notes."""
    from goblueprint.cli._paths import input_dir
    from goblueprint.lab import frame, records

    table, dump = records.load(input_dir(directory))
    for note in table.get("messages", []):
        print(f"note: {note}", file=sys.stderr)
    return frame.records_frame(table, dump)


def timeline_with_lab(tl: Timeline, directory: str) -> Timeline:
    from goblueprint.lab.timeline import with_records

    return with_records(tl, records_of(directory))


def sql_tables(directory: str) -> dict[str, pl.DataFrame]:
    """lab_records (one row per record, see docs/lab.md), lab_steals, lab_queues, lab_sysmon."""
    from goblueprint.lab import runqueues
    from goblueprint.lab.sysmon import sysmon

    df = records_of(directory)
    steals = runqueues.steals(df)
    schema = {
        "t": pl.Int64, "thief": pl.Int64, "victim": pl.Int64, "count": pl.Int64,
        "runnext": pl.Boolean, "victim_queue": pl.Int64,
    }  # fmt: skip
    return {
        "lab_records": df.with_columns(pl.col("kind").cast(pl.String), pl.col("function").cast(pl.String)),
        "lab_steals": pl.DataFrame(steals, schema=schema),
        "lab_queues": runqueues.queue_lengths(df),
        "lab_sysmon": pl.DataFrame(
            sysmon(df)["ticks"],
            schema={"t": pl.Int64, "delay_us": pl.Int64, "idle": pl.Int64, "interval_ns": pl.Int64},
        ),
    }


def write_lab_parquet(directory: str, out_dir: str | Path) -> list[Path]:
    """Next to ``trace export --format parquet``'s files: the lab tables."""
    from goblueprint.timeline.tables import write_frames

    return write_frames(sql_tables(directory), out_dir)
