"""The builder's finishing steps give numpy's results: the spans' sort (_span_order) is np.lexsort's
stable order, the distinct codes (_distinct) np.unique's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from goblueprint.timeline.builder import _distinct, _span_order


def _spans(rng: np.random.Generator, n: int, lane_ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """N spans over a few lane kinds and LANE_IDS, emitted in time order with ties and a few
    lanes whose spans come out of order (as regions closing innermost first do)."""
    lane_kind = rng.integers(0, 5, n).astype(np.uint8)
    lane_id = rng.choice(lane_ids, n).astype(np.int64)
    start = np.sort(rng.integers(0, n // 4 + 1, n)).astype(np.int64)  # many equal starts
    end = start + rng.integers(0, 3, n)
    late = rng.random(n) < 0.02  # a span emitted after later ones of its lane
    start[late] -= rng.integers(1, 50, int(late.sum()))
    return lane_kind, lane_id, start, end


@pytest.mark.parametrize(
    "lane_ids",
    # A direct rank table (also for ids near 2**63 close together); np.unique's for ids far apart.
    [np.arange(-1, 40), np.arange(2**63 - 30, 2**63 - 1), np.array([-1, 3, 2**62, 2**63 - 1, 7])],
    ids=["small ids", "huge close ids", "huge sparse ids"],
)
def test_span_order_is_lexsort(lane_ids: np.ndarray) -> None:
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 1000, 20000):
        lane_kind, lane_id, start, end = _spans(rng, n, lane_ids)
        want = np.lexsort([end, start, lane_id, lane_kind])
        assert np.array_equal(_span_order(lane_kind, lane_id, start, end), want)


def test_span_order_in_order_lanes_keep_emitted_order() -> None:
    """Equal keys keep the order the builder emitted them in (the sort is stable)."""
    lane_kind = np.zeros(6, np.uint8)
    lane_id = np.array([2, 1, 2, 1, 2, 1], np.int64)
    start = np.array([5, 5, 5, 5, 4, 5], np.int64)
    end = np.array([6, 6, 6, 6, 9, 6], np.int64)
    assert _span_order(lane_kind, lane_id, start, end).tolist() == [1, 3, 5, 4, 0, 2]


@pytest.mark.parametrize("high", [50, 2**40], ids=["dense codes", "sparse codes"])
def test_distinct_codes_are_np_unique(high: int) -> None:
    """builder._distinct, the string and stack codes finish() numbers: np.unique's, 0 included."""
    rng = np.random.default_rng(3)
    cols = [rng.integers(-8, high, 5000), rng.integers(1, 40, 300).astype(np.int32), np.zeros(0, np.int32)]
    want = np.unique(np.concatenate([*cols, [0]]))
    assert np.array_equal(_distinct(cols), want)
    assert _distinct([np.array([5, 7], np.int32)]).tolist() == [0, 5, 7]


def test_in_order_reads_a_lane_in_stretches_and_checks_across_their_edges(tmp_path: Path) -> None:
    from goblueprint.timeline.builder import _in_order
    from goblueprint.timeline.spill import ColumnSpill

    start = np.arange(100, dtype=np.int64) // 3  # ties on start, ends growing within them
    end = start + np.arange(100) % 3
    ranges = (np.array([0, 40, 70]), np.array([30, 60, 100]))  # the lane's rows: 80 of 100
    rows = np.concatenate([np.arange(a, b) for a, b in zip(*ranges, strict=True)])

    def spill(s: np.ndarray, e: np.ndarray) -> ColumnSpill:
        out = ColumnSpill(tmp_path, f"t{len(list(tmp_path.iterdir()))}", {"start": np.int64, "end": np.int64})
        out.append({"start": s, "end": e})
        return out

    for stretch in (1, 7, 25, 1000):
        assert _in_order(spill(start, end), ranges, stretch)
        # Out of order between spill rows 44 and 45 (lane rows 34 and 35: on either side of
        # an edge for stretches of 7), and between rows 70 and 71 (a tie of starts, ends the
        # wrong way round).
        s2 = start.copy()
        s2[44] = start[45] + 1
        assert not _in_order(spill(s2, end), ranges, stretch)
        e2 = end.copy()
        assert start[70] == start[71] and rows[50] == 70
        e2[70] = end[71] + 1
        assert not _in_order(spill(start, e2), ranges, stretch)
    # Rows outside the ranges are not read: out of order there changes nothing.
    s3 = start.copy()
    s3[35] = -1
    assert _in_order(spill(s3, end), ranges, 7)


@pytest.mark.parametrize(
    "lane_ids",
    # A kind's lanes counted in a table (close ids); merge sorted (ids too far apart to count).
    [np.arange(-1, 40), np.arange(3), np.array([-1, 3, 2**62, 2**63 - 1, 7])],
    ids=["narrow ids", "few ids", "huge sparse ids"],
)
def test_group_spans_is_a_stable_sort_by_kind_and_lane(tmp_path: Path, lane_ids: np.ndarray) -> None:
    """builder_kernel.group_spans (what a spilling builder keeps each chunk's spans by): the rows
    in np.lexsort's stable order by (lane kind, lane id), typed as the spill keeps them, and
    each lane's run of rows."""
    from goblueprint.timeline.builder import TimelineBuilder
    from goblueprint.trace import kernels

    rng = np.random.default_rng(11)
    types = list(TimelineBuilder(spill=tmp_path).spans.types.values())  # type: ignore[attr-defined]
    for n in (0, 1, 2, 1000, 5000):
        lane_kind, lane_id, start, end = _spans(rng, n, lane_ids)
        rows = np.column_stack(
            [lane_kind, lane_id, start, end, *(rng.integers(-1, 300, n) for _ in range(6))]
        ).astype(np.int64)
        if n == 1000:  # one kind, its lanes in order already
            rows[:, 0] = 3
            rows = rows[np.argsort(rows[:, 1], kind="stable")]
        cols = [np.full(n + 3, 99, t) for t in types]
        runs = [np.full(n + 3, -7, np.int64) for _ in range(3)]
        got = kernels.get().group_spans(rows, *cols, *runs)
        order = np.lexsort([rows[:, 1], rows[:, 0]])
        for k, t in enumerate(types):
            assert np.array_equal(cols[k][:n], rows[order, k].astype(t)), k
        key = rows[order][:, :2]
        first = np.flatnonzero(np.append(True, (key[1:] != key[:-1]).any(axis=1))) if n else np.zeros(0, int)
        assert got == len(first)
        assert np.array_equal(runs[0][:got], key[first, 0])
        assert np.array_equal(runs[1][:got], key[first, 1])
        assert np.array_equal(runs[2][:got], first)
