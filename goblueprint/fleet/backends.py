"""Where a batch's ingest tasks run: a local process pool, or an existing Ray or Dask cluster.

Every backend runs the same plan: one ``plan.ingest_task`` per trace, results handed to
``on_result`` as each finishes.  Only the ingests are remote; the query runs in the calling
process, with DuckDB over the Parquet files the tasks wrote.  Why not a per-trace partial
aggregation on the workers: a query is any SQL, and most of what is asked of many traces
(a percentile over all of them, a join of one trace's rows with another's, ORDER BY ...
LIMIT across the set) cannot be split into per-trace parts and merged; the ingest is where
the time goes (a pass over every event), while DuckDB reads the stored columns in a
fraction of that.  So the workers must share the file system, with the same cache path
(``GOBLUEPRINT_CACHE``) and the traces at the same paths: a cluster on one machine, or
nodes that mount the same storage.

Ray and Dask are optional (``pip install 'goblueprint[fleet]'``); a missing one is a
one-line error naming the package.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from goblueprint.errors import UsageError
from goblueprint.fleet.plan import ingest_task

OnResult = Callable[[dict[str, Any]], None]
LOCAL = "local"  # an ADDRESS that starts a cluster on this machine instead of joining one


@dataclass(frozen=True)
class Backend:
    kind: str  # "local", "ray" or "dask"
    workers: int  # processes for the local pool and a started local cluster
    address: str | None = None  # the cluster's, or LOCAL


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def require(package: str, flag: str) -> None:
    """A one-line error when the optional PACKAGE behind FLAG is not installed."""
    module = package.split("[")[0].replace("-", "_")
    if module == "dask":
        module = "distributed"  # dask's cluster client is the distributed package
    if importlib.util.find_spec(module) is None:
        raise UsageError(
            f"{flag} needs the {package} package: pip install 'goblueprint[fleet]' (or pip install '{package}')"
        )


def run(jobs: list[tuple[str, str]], backend: Backend, on_result: OnResult, *, force: bool = False) -> None:
    """Run ``ingest_task(trace, path)`` for each (trace, absolute path) of JOBS on BACKEND."""
    if not jobs:
        return
    if backend.kind == "local":
        _run_local(jobs, backend.workers, on_result, force)
    elif backend.kind == "dask":
        require("dask[distributed]", "--dask")
        _run_dask(jobs, backend, on_result, force)
    elif backend.kind == "ray":
        require("ray", "--ray")
        _run_ray(jobs, backend, on_result, force)
    else:
        raise UsageError(f"unknown backend {backend.kind}")


def _run_local(jobs: list[tuple[str, str]], workers: int, on_result: OnResult, force: bool) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn, not fork: the caller may already hold DuckDB's and polars' threads, which a
    # forked child would inherit stopped mid-lock.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx) as pool:
        futures = [pool.submit(ingest_task, trace, path, force) for trace, path in jobs]
        try:
            for fut in as_completed(futures):
                on_result(fut.result())
        except BaseException:  # Ctrl-C or a worker's bug: drop the queued traces, then re-raise
            for fut in futures:
                fut.cancel()
            raise


def _run_dask(jobs: list[tuple[str, str]], backend: Backend, on_result: OnResult, force: bool) -> None:
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if backend.address == LOCAL:
        cluster = LocalCluster(
            n_workers=backend.workers, threads_per_worker=1, processes=True,
            host="127.0.0.1", dashboard_address=None,
        )  # fmt: skip
    try:
        with Client(cluster if cluster is not None else backend.address) as client:
            # pure=False: a trace re-ingested with --force is new work, not a cached result.
            futures = [client.submit(ingest_task, trace, path, force, pure=False) for trace, path in jobs]
            for fut in as_completed(futures):
                on_result(fut.result())
    finally:
        if cluster is not None:
            cluster.close()


def _run_ray(jobs: list[tuple[str, str]], backend: Backend, on_result: OnResult, force: bool) -> None:
    import ray

    started = False
    if not ray.is_initialized():
        local = backend.address == LOCAL
        # Ray's own notices (token auth on by default, ...) would mix with the one line per
        # failure that stderr promises; its errors still show.
        logging.getLogger("ray").setLevel(logging.ERROR)
        ray.init(
            address=None if local else backend.address,
            num_cpus=backend.workers if local else None,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
        started = True
    try:
        task = ray.remote(num_cpus=1)(ingest_task)
        pending = [task.remote(trace, path, force) for trace, path in jobs]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                on_result(ray.get(ref))
    finally:
        if started:
            ray.shutdown()
