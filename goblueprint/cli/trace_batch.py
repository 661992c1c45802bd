"""goblueprint trace batch: ingest many traces in parallel and query them as one set of tables."""

from __future__ import annotations

import argparse
import os
import sys

HELP = "ingest many traces in parallel (local, Ray or Dask) and query them as one set of tables"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "patterns", nargs="+", metavar="PATTERN",
        help="trace files, globs (quote them; ** crosses directories) or directories (their *.trace "
        "and *.out files)",
    )  # fmt: skip
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--sql", metavar="QUERY",
        help="DuckDB SQL over all traces' tables, e.g. \"SELECT trace, count(*) FROM events GROUP BY "
        "trace ORDER BY trace\" (default: the traces table)",
    )  # fmt: skip
    what.add_argument(
        "--metrics", action="store_true",
        help="the fleet report: STW pauses by reason and the worst ones, scheduling latency per start "
        "function, P utilization, goroutines; per trace and over all",
    )  # fmt: skip
    parser.add_argument(
        "-o", "--output", metavar="REPORT.html",
        help="with --metrics: also write the report as one self-contained HTML page",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON (deterministic) instead of tables")
    parser.add_argument(
        "--workers", type=int, metavar="N",
        help="processes of the local pool, or of a cluster started with ADDRESS 'local' (default: cores)",
    )  # fmt: skip
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--ray", metavar="ADDRESS",
        help="ingest on this Ray cluster ('auto', ray://host:port, or 'local' to start one here)",
    )  # fmt: skip
    where.add_argument(
        "--dask", metavar="ADDRESS",
        help="ingest on this Dask scheduler (tcp://host:port, or 'local' to start one here)",
    )  # fmt: skip
    parser.add_argument("--force", action="store_true", help="ingest every trace again, stored or not")
    parser.description = (
        "Each trace is ingested once (timeline.ingest: a trace whose sound tables are stored is not "
        "read again), in parallel; then the query runs here, with DuckDB, over every trace's stored "
        "Parquet files as one set of tables (events, intervals, goroutines, metrics, flows, stacks, "
        "lanes, states), each row with its trace (the path as named here), plus 'traces' (one row per "
        "trace: file, content hash, Go version, start/end, events, error) and 'failures' (trace, "
        "error, offset). A Ray or Dask cluster runs the ingests only, so its workers must see the "
        "traces and goblueprint's cache at the same paths (one machine, or shared storage)."
    )
    parser.epilog = (
        "A trace Go's reader rejects goes to the failures table and the others go on; one that breaks "
        "part-way keeps the events before the failure in the tables and is listed there too. Each "
        "failure is one line on stderr, and the exit status is then 1 (0 when all traces were read "
        "whole). Progress (a bar, a line per trace) shows only when stderr is a terminal."
    )


def run(args: argparse.Namespace) -> int:
    import duckdb

    from goblueprint.cli._paths import output_file, output_format, writing
    from goblueprint.errors import UsageError
    from goblueprint.fleet import backends, metrics, plan, report, tables
    from goblueprint.trace.progress import tally

    if args.output is not None:
        if not args.metrics:
            raise UsageError("-o writes the --metrics report: give --metrics too")
        output_format(args.output, {".html": "html", ".htm": "html"}, what="the report")
        output_file(args.output)
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be 1 or more")
    workers = args.workers or backends.default_workers()
    if args.ray is not None:
        backend = backends.Backend("ray", workers, args.ray)
        backends.require("ray", "--ray")
    elif args.dask is not None:
        backend = backends.Backend("dask", workers, args.dask)
        backends.require("dask[distributed]", "--dask")
    else:
        backend = backends.Backend("local", workers)

    names = plan.expand(args.patterns)
    done: list[dict] = []
    with tally(f"ingesting {len(names)} traces", len(names)) as advance:

        def on_result(res: dict) -> None:
            done.append(res)
            r = plan.TraceResult(**res)
            advance(f"failed: {plan.describe(r).splitlines()[0]}" if r.error else
                    f"{r.trace}: {r.events} events, {r.seconds:.2f} s")  # fmt: skip

        backends.run([(n, os.path.abspath(n)) for n in names], backend, on_result, force=args.force)
    batch = plan.results(done, names)

    con = duckdb.connect(":memory:")
    try:
        made = tables.register(con, batch, {n: n for n in names})
        if args.metrics:
            data = metrics.compute(con, set(made))
        else:
            rel = con.sql(args.sql or "SELECT * FROM traces")
            columns = rel.columns if rel is not None else []
            rows = rel.fetchall() if rel is not None else []
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"SQL error: {first}") from None
    finally:
        con.close()

    failures = [{"trace": r.trace, "error": r.error, "offset": r.offset} for r in batch if r.error]
    if args.metrics:
        if args.output is not None:
            with writing(args.output), open(args.output, "w", encoding="utf-8") as f:
                f.write(report.metrics_html(data))
        if args.json:
            sys.stdout.write(report.dumps(data))
        else:
            report.print_metrics(data)
    elif args.json:
        sys.stdout.write(report.rows_json([dict(zip(columns, row, strict=True)) for row in rows], failures))
    else:
        report.print_rows(columns, rows)
    for r in batch:
        if r.error:
            print(f"goblueprint: error: {plan.describe(r)}", file=sys.stderr)
    return 1 if failures else 0
