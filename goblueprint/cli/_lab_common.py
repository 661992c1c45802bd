"""Loading a lab folder for the `goblueprint lab …` readers."""

from __future__ import annotations

import sys
from typing import Any

import polars as pl


def load_frame(directory: str, *, notes: bool = True) -> tuple[dict[str, Any], pl.DataFrame]:
    from goblueprint.cli._paths import input_dir
    from goblueprint.lab import frame, records

    table, dump = records.load(input_dir(directory))
    if notes:
        for note in table.get("messages", []):
            print(f"note: {note}", file=sys.stderr)
    return table, frame.records_frame(table, dump)
