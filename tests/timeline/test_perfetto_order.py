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


@pytest.mark.parametrize("seed", range(4))
def test_title_codes_are_the_title_keys_grouped(seed: int) -> None:
    """The export's compiled titling (``title_codes``) is ``render.lanes.title_keys`` grouped as
    ``dense_codes`` groups it: the same codes, the same distinct keys in the same order."""
    import polars as pl

    from goblueprint.render.lanes import state_names, title_keys
    from goblueprint.timeline.model import LaneKind

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    cols = {
        # Every lane kind; G -1 on P and M lanes too (a P running no G is titled by its label).
        "lane_kind": rng.integers(0, len(LaneKind), n).astype(np.uint8),
        "g": rng.choice([-1, 0, 1, 7, 1 << 40], n).astype(np.int64),
        "label": rng.choice([0, 1, 5, (1 << 32) - 1], n).astype(np.uint32),
        "state": rng.integers(0, 256, n).astype(np.uint8),
    }
    k = kernels.get()
    pm = np.array([int(LaneKind.P), int(LaneKind.M)], np.int64)
    code, keys = k.title_codes(*cols.values(), state_names()[1], pm, int(LaneKind.G))
    want_code, want_keys = k.dense_codes(title_keys(pl.DataFrame(cols)))
    assert np.array_equal(code, want_code) and np.array_equal(keys, want_keys)


@pytest.mark.parametrize("seed", range(4))
def test_counter_deltas_group_each_name_and_carry_its_clock(seed: int) -> None:
    """``counter_deltas``: a batch's samples by name (ascending), each name's in batch order, its
    times as deltas from its previous sample, also across batches; the first name whose samples
    go back in time is told."""
    rng = np.random.default_rng(seed)
    strings = 40
    last = np.zeros(strings, np.int64)
    want_last: dict[int, int] = {}
    origin = 1000
    for batch in range(3):
        n = int(rng.integers(0, 500))
        name = rng.choice([3, 4, 17, 39], n).astype(np.int64)
        time = origin + np.sort(rng.integers(0, 10_000, n)) + 20_000 * batch
        value = rng.random(n)
        ids, off, delta, values, bad = kernels.get().counter_deltas(name, time, value, origin, last)
        assert bad == -1
        assert ids.tolist() == sorted(set(name.tolist()))
        for j, sid in enumerate(ids.tolist()):
            mine = name == sid
            t = time[mine] - origin
            assert np.array_equal(delta[off[j] : off[j + 1]], np.diff(t, prepend=want_last.get(sid, 0)))
            assert np.array_equal(values[off[j] : off[j + 1]], value[mine])
            want_last[sid] = int(t[-1])
        assert off[-1] == n
    # A name whose samples go back in time (17, and 39 after it) is told: the first of them.
    name = np.array([39, 17, 3, 17, 39], np.int64)
    time = np.array([10, 90_000, 90_001, 50, 5], np.int64) + origin
    bad = kernels.get().counter_deltas(name, time, np.zeros(5), origin, last)[-1]
    assert bad == 17


def test_lane_of_by_table_is_the_binary_search() -> None:
    """``lane_of`` by a table indexed by id (dense ids) finds what the search of the sorted ids
    finds, -1 for ids without a lane: below 0 (NONE), between lanes, past the last."""
    from goblueprint.timeline.export_perfetto import _Export

    rng = np.random.default_rng(7)
    ids = np.unique(rng.integers(0, 3000, 800))
    idx = rng.permutation(len(ids)).astype(np.int64)
    by_table, by_search = _Export.__new__(_Export), _Export.__new__(_Export)
    for e in (by_table, by_search):
        e.lane_keys, e.lane_luts = {}, {}
    by_table.index_lanes(0, ids, idx)
    by_search.lane_keys[0] = (ids, idx)
    assert 0 in by_table.lane_luts and not by_search.lane_luts
    asked = np.concatenate([[-1, -7, ids[-1], ids[-1] + 1, 1 << 40], rng.integers(-5, 3100, 5000)])
    got = by_table.lane_of(0, asked)
    assert np.array_equal(got, by_search.lane_of(0, asked))
    assert got[0] == got[1] == got[3] == got[4] == -1 and got[2] == idx[-1]
    # Ids too sparse for a table are searched.
    by_table.index_lanes(1, np.array([5, 1 << 40]), np.array([0, 1]))
    assert 1 not in by_table.lane_luts
    assert by_table.lane_of(1, np.array([5, 6, 1 << 40, -1])).tolist() == [0, -1, 1, -1]
