"""The three backends run the same plan: the local pool, a local Dask cluster and a local Ray give the
same tables, the same failures and the same report."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from goblueprint.fleet import backends, metrics, plan, tables

pytestmark = pytest.mark.slow


def answer(fleet_dir: Path, backend: backends.Backend) -> dict[str, Any]:
    import duckdb

    names = plan.expand([str(fleet_dir)])
    done: list[dict[str, Any]] = []
    backends.run([(n, str(Path(n).resolve())) for n in names], backend, done.append)
    batch = plan.results(done, names)
    con = duckdb.connect()
    made = tables.register(con, batch, {n: n for n in names})
    counts = con.sql("SELECT trace, count(*), sum(time) FROM events GROUP BY trace ORDER BY trace").fetchall()
    report = metrics.compute(con, set(made))
    con.close()
    return {"counts": counts, "report": report, "pids": {r.pid for r in batch}}


@pytest.fixture(scope="module")
def local(fleet_dir: Path) -> dict[str, Any]:
    return answer(fleet_dir, backends.Backend("local", 1))


def test_dask_cluster_gives_the_local_answer(fleet_dir: Path, local: dict[str, Any]) -> None:
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("dask[distributed] is not installed (pip install 'goblueprint[fleet]')")
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster:
        remote = answer(fleet_dir, backends.Backend("dask", 1, cluster.scheduler_address))
        workers = {w.pid for w in cluster.workers.values()}  # the Nannies' worker processes
    assert remote["counts"] == local["counts"] and remote["counts"]
    assert remote["report"] == local["report"]
    assert remote["report"]["failures"] and remote["report"]["traces"]
    assert workers and remote["pids"] <= workers  # ran in the cluster's processes


def test_ray_gives_the_local_answer(fleet_dir: Path, local: dict[str, Any]) -> None:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (pip install 'goblueprint[fleet]'; not in the test extra: ~80 MB)")
    import os

    import ray

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        remote = answer(fleet_dir, backends.Backend("ray", 1))
    finally:
        ray.shutdown()
    assert remote["counts"] == local["counts"] and remote["counts"]
    assert remote["report"] == local["report"]
    assert os.getpid() not in remote["pids"]  # the tasks ran in Ray's workers
