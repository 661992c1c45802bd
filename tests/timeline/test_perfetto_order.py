"""The compiled track order (perfetto_kernel.track_order) against the order it promises, spelled
out as one lexsort of every event by (time, rank, second key) with ties in insertion order."""

from __future__ import annotations

import numpy as np
import pytest

from goblueprint.trace import kernels


def _lexsorted(s, e, title, xts, xname, xflow_out, xflow_in, sink_row, sink_id):
    """The events as the export defines them: begins, ends, span instants, other instants."""
    nz = np.flatnonzero(s != e)
    z = np.flatnonzero(s == e)
    nx = len(xts)
    ts = np.concatenate([s[nz], e[nz], s[z], xts])
    rank = np.concatenate([np.ones(len(nz)), np.zeros(len(nz)), np.ones(len(z)), np.ones(nx)])
    sec = np.concatenate([-e[nz], -s[nz], -s[z], np.zeros(nx, np.int64)])
    kind = np.concatenate([np.full(len(nz), 1), np.full(len(nz), 2), np.full(len(z), 3), np.full(nx, 3)])
    name = np.concatenate([title[nz], np.zeros(len(nz), np.int64), title[z], xname])
    flow_out = np.concatenate([np.zeros(2 * len(nz) + len(z), np.int64), xflow_out])
    order = np.lexsort((sec, rank, ts))
    at = np.empty(len(order), np.int64)
    at[order] = np.arange(len(order))
    ev_of_row = np.full(len(s), -1, np.int64)
    ev_of_row[nz] = at[np.arange(len(nz))]
    ev_of_row[z] = at[2 * len(nz) + np.arange(len(z))]
    fin = xflow_in > 0
    fev = np.concatenate([ev_of_row[sink_row], at[2 * len(nz) + len(z) + np.flatnonzero(fin)]])
    fid = np.concatenate([sink_id, xflow_in[fin]])
    o = np.lexsort((fid, fev))
    return np.diff(ts[order], prepend=0), kind[order], name[order], flow_out[order], fev[o], fid[o]


@pytest.mark.parametrize("seed", range(6))
def test_track_order_is_the_lexsort_of_every_event(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    # Few distinct times: ties between begins, ends and instants at every instant.
    start = rng.integers(0, 60, n)
    end = start + rng.choice([0, 0, 1, 3, 20], n)
    if seed % 2:
        start, end = np.sort(start), np.sort(start) + 2  # disjoint-ish: ends in row order, the common case
    o = np.lexsort((-end, start))  # what the export hands over: by start, the longer first
    if seed == 4:
        o = rng.permutation(n)  # and rows out of that order still come out in the events' order
    s, e = start[o].astype(np.int64), end[o].astype(np.int64)
    title = rng.integers(1, 50, n)  # interned name ids
    nx = int(rng.integers(0, 60))
    xts = rng.integers(0, 70, nx)
    xname = rng.integers(0, 60, nx)  # 0: none
    xflow_out = np.where(rng.random(nx) < 0.5, rng.integers(1, 1000, nx), 0)
    xflow_in = np.where(rng.random(nx) < 0.3, rng.integers(1, 1000, nx), 0)
    sink_row = rng.integers(0, n, min(n, 40))  # slices and span instants alike
    sink_id = rng.integers(1, 1000, len(sink_row))
    args = [np.ascontiguousarray(a, dtype=np.int64) for a in (s, e, title, xts, xname, xflow_out, xflow_in, sink_row, sink_id)]  # fmt: skip
    got = kernels.get().track_order(*args)
    want = _lexsorted(*args)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_array_equal(g, w, err_msg=f"output {k}")
