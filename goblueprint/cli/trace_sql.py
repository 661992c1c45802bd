"""goblueprint trace sql: DuckDB SQL over a trace's tables (events, intervals, goroutines, metrics, ...)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from goblueprint.cli._lab_args import add_lab_argument
from goblueprint.cli._partial import add_partial_flag, finish, open_input_trace
from goblueprint.cli._show_capture import add_show_capture_flag

HELP = "run a DuckDB SQL query over the trace's tables (events, intervals, goroutines, metrics, flows, ...)"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="execution trace file (Go 1.22 or newer)")
    parser.add_argument(
        "query", metavar="SQL", help='e.g. "SELECT name, exec FROM goroutines ORDER BY exec DESC"'
    )
    parser.add_argument(
        "--kernel",
        metavar="DIR",
        help="add the kernel tables of a capture made with --kernel (kernel_intervals, ...)",
    )
    add_lab_argument(parser)
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print rows as a JSON list of objects")
    fmt.add_argument("--csv", action="store_true", help="print rows as CSV")
    parser.epilog = (
        "tables: events, intervals, goroutines, metrics, flows, stacks, lanes, states "
        "(see goblueprint/timeline/tables.py)"
    )
    add_partial_flag(parser)  # after the epilog: it adds its own paragraph to it
    add_show_capture_flag(parser)


def run(args: argparse.Namespace) -> int:
    from goblueprint.errors import GoblueprintError, UsageError

    # The tables first, DuckDB after: a first run ingests the trace, and DuckDB's library
    # loaded beforehand stood under the ingest's peak (~25 MB of its pages on a 46 MB trace).
    reader, files, frames = _tables(args)
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        for name, path in files.items():
            quoted = str(path).replace("'", "''")
            con.execute(f"CREATE VIEW \"{name}\" AS SELECT * FROM read_parquet('{quoted}')")
        for name, df in frames.items():
            con.register(name, df.to_arrow())
        relation = con.sql(args.query)
        result = relation.to_arrow_table() if relation is not None else None
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"SQL error: {first}") from None
    finally:
        con.close()
    if result is None or result.num_rows == 0:
        raise GoblueprintError("the query returned no rows")
    _print(result, args)
    return finish(reader, args, f"the tables hold the {reader.events_read} events before it")


def _tables(args: argparse.Namespace) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """What read the trace, and the tables a query sees: stored Parquet files by name (the
    ingested trace's, read by DuckDB where they lie) and frames by name (--kernel/--lab ones,
    and every table with --show-capture, which asks for rows the stored ones leave out: those
    are built in memory from one pass)."""
    files: dict[str, Any] = {}
    tables: dict[str, Any] = {}
    if args.show_capture:
        from goblueprint.timeline.tables import trace_tables

        reader = open_input_trace(args.trace)
        tables = trace_tables(reader, show_capture=True)
    else:
        from goblueprint.cli._ingested import ingested_trace

        reader = ingested_trace(args.trace)
        files = dict(reader.table_files())
    if args.kernel:
        from goblueprint.kernel.views import sql_tables

        tables.update(sql_tables(args.trace, args.kernel))
    if args.lab:
        from goblueprint.lab.views import sql_tables as lab_tables

        tables.update(lab_tables(args.lab))
    return reader, files, tables


def _print(result, args: argparse.Namespace) -> None:
    import json

    import polars as pl

    df = pl.from_arrow(result)
    if not isinstance(df, pl.DataFrame):
        df = df.to_frame()
    if args.json:
        # Keys in the query's column order (to_dicts keeps it; sorting would lose it).
        rows = df.to_dicts()
        json.dump(rows, sys.stdout, default=str, indent=1)
        sys.stdout.write("\n")
        return
    if args.csv:
        nested = [c for c, t in df.schema.items() if isinstance(t, pl.List | pl.Struct | pl.Array)]
        if nested:  # CSV has no nesting: such cells become JSON text
            df = df.with_columns(
                pl.Series(c, [json.dumps(v, default=str, sort_keys=True) for v in df[c].to_list()], pl.String)
                for c in nested
            )
        sys.stdout.write(df.write_csv())
        return
    from rich.markup import escape
    from rich.table import Table

    from goblueprint.cli._console import table_console

    table = Table(caption=f"{df.height} rows")
    for col, dtype in df.schema.items():
        if dtype.is_numeric():
            table.add_column(escape(col), justify="right", no_wrap=True)
        else:  # on a terminal too narrow for it, text wraps in its cell rather than being cut
            table.add_column(escape(col), justify="left", overflow="fold")
    for row in df.iter_rows():
        table.add_row(*(escape("" if v is None else str(v)) for v in row))
    table_console().print(table)
