"""goblueprint lab sql: DuckDB over a lab run's records (view lab_records) and sites (view lab_sites)."""

from __future__ import annotations

import argparse

HELP = "run SQL (DuckDB) over a lab run's records; --parquet writes them as a Parquet file instead"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="a `lab observe` output folder")
    parser.add_argument(
        "query", nargs="?", metavar="SQL", help="e.g. SELECT kind, count(*) FROM lab_records GROUP BY 1"
    )
    parser.add_argument("--parquet", metavar="OUT", help="write the records table to OUT (Parquet)")


def run(args: argparse.Namespace) -> int:
    import polars as pl

    from goblueprint.cli._lab_common import load_frame
    from goblueprint.errors import LabError, UsageError
    from goblueprint.lab import frame

    table, records = load_frame(args.dir)
    if args.parquet:
        frame.write_parquet(records, args.parquet)
        if not args.query:
            return 0
    if not args.query:
        raise UsageError("give a SQL query or --parquet OUT")
    con = frame.duckdb_view(records)
    sites = pl.DataFrame(table["sites"])
    con.register("lab_sites", sites.to_arrow())
    import duckdb

    try:
        result = con.execute(args.query)
    except duckdb.Error as exc:
        raise LabError(f"SQL: {str(exc).splitlines()[0]}") from exc
    cols = [d[0] for d in result.description or []]
    print("\t".join(cols))
    for row in result.fetchall():
        print("\t".join("" if v is None else str(v) for v in row))
    return 0
