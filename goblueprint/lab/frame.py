"""Lab records as a polars table (and Parquet, and a DuckDB view): one row per record.

The kind and place of each record come from the site table; the meaning of the
obj/a/b/c columns per kind is in probes.COLUMNS (status records: obj is the G or
P, a the prior status, b the new one, c the wrapper's caller PC).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from goblueprint.errors import LabError
from goblueprint.lab.records import Dump


def records_frame(table: dict[str, Any], dump: Dump) -> pl.DataFrame:
    sites = table["sites"]
    kinds = sorted({s["kind"] for s in sites})
    functions = sorted({s["function"] for s in sites})
    recs = dump.records
    known = np.array(sorted(s["id"] for s in sites), dtype=np.uint32)
    unknown = ~np.isin(recs["site"], known)
    if unknown.any():
        i = int(np.argmax(unknown))
        raise LabError(f"{dump.path}: record {i} names site {int(recs['site'][i])}, not in the site table")
    site = pl.Series("site", recs["site"])
    kind = site.replace_strict({s["id"]: s["kind"] for s in sites}, return_dtype=pl.Enum(kinds))
    function = site.replace_strict({s["id"]: s["function"] for s in sites}, return_dtype=pl.Enum(functions))
    return pl.DataFrame(
        {
            "t": recs["t"],
            "kind": kind,
            "site": site,
            "function": function,
            "m": recs["m"],
            "p": recs["p"],
            "g": recs["g"],
            "obj": recs["obj"],
            "a": recs["a"],
            "b": recs["b"],
            "c": recs["c"],
        }
    ).sort("t", maintain_order=True)


def write_parquet(frame: pl.DataFrame, path: Path) -> None:
    frame.write_parquet(path)


def duckdb_view(frame: pl.DataFrame, name: str = "lab_records") -> Any:
    """A DuckDB connection with the records as view NAME."""
    import duckdb

    con = duckdb.connect()
    con.register(name, frame.to_arrow())
    return con
