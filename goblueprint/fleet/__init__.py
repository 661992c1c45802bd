"""Many traces at once: ingest a set of traces in parallel, then query them as one set of tables.

* ``plan``      which files a set of patterns names, and the one task per trace
                (ingest, in whatever process runs it) with its plain-data result;
* ``backends``  where the tasks run: a local process pool, or an existing Ray or
                Dask cluster (optional packages: ``pip install 'goblueprint[fleet]'``);
* ``tables``    the DuckDB views over every trace's Parquet files, each row with its ``trace``;
* ``metrics``   the fleet report's numbers (pauses, scheduling latency, P utilization,
                goroutines) in SQL over those views, with ``trace metrics``'s definitions;
* ``report``    the table, JSON and self-contained HTML forms of a report.

The tasks only ingest; the query always runs in the calling process over the files
they wrote (see ``backends`` for why).
"""
