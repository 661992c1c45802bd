"""Every trace's tables as one set of DuckDB views, each row carrying its ``trace``.

For each table (events, intervals, goroutines, metrics, flows, stacks, lanes, states) one
view reads all traces' Parquet files at once (``read_parquet([...], filename=true)``) and
joins each row's file to the trace it came from: ``trace`` is the path as the batch named
it, first column of every view.  Rows are the ingested rows unchanged, so
``SELECT trace, count(*) FROM events GROUP BY trace`` counts the events Go's reader yields
for each file.  Two names of one content (a copied file) share one Parquet file, read once,
and each gets its rows.

Beside them:

* ``traces``   one row per trace of the batch: trace, file, content (BLAKE2b), go_version,
               start_ns, end_ns, duration_ns, events, bytes, error, offset;
* ``failures`` trace, error, offset for each trace that Go's reader rejects (no rows
               elsewhere) or that breaks part-way (its rows before the failure stay).
"""

from __future__ import annotations

import os
from typing import Any

from goblueprint.fleet.plan import TraceResult

_TRACES_COLUMNS = (
    "trace VARCHAR, file VARCHAR, content VARCHAR, go_version VARCHAR, start_ns BIGINT, end_ns BIGINT, "
    'duration_ns BIGINT, events BIGINT, bytes BIGINT, error VARCHAR, "offset" BIGINT'
)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def register(con: Any, batch: list[TraceResult], files: dict[str, str]) -> list[str]:
    """Create the views over BATCH's tables in CON (FILES: trace -> its file); the table names made."""
    con.execute(f"CREATE TABLE traces ({_TRACES_COLUMNS})")
    con.executemany(
        "INSERT INTO traces VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            [
                r.trace, os.path.abspath(files[r.trace]), r.content, r.go_version, r.start_ns, r.end_ns,
                None if r.start_ns is None or r.end_ns is None else r.end_ns - r.start_ns,
                r.events, r.bytes, r.error, r.offset,
            ]
            for r in batch
        ],
    )  # fmt: skip
    con.execute('CREATE VIEW failures AS SELECT trace, error, "offset" FROM traces WHERE error IS NOT NULL')
    names = sorted({name for r in batch for name in r.tables})
    for name in names:
        pairs = [(r.tables[name], r.trace) for r in batch if name in r.tables]
        unique = sorted({path for path, _ in pairs})
        mapping = f"_files_{name}"
        con.execute(f'CREATE TABLE "{mapping}" (filename VARCHAR, trace VARCHAR)')
        con.executemany(f'INSERT INTO "{mapping}" VALUES (?, ?)', [list(p) for p in pairs])
        listed = ", ".join(_quote(p) for p in unique)
        con.execute(
            f'CREATE VIEW "{name}" AS SELECT f.trace, r.* EXCLUDE (filename) '
            f"FROM read_parquet([{listed}], filename = true, union_by_name = true) r "
            f'JOIN "{mapping}" f USING (filename)'
        )
    return ["traces", "failures", *names]
