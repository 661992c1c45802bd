"""The spans' sort (builder._span_order) is np.lexsort's stable order, whatever the input's order."""

from __future__ import annotations

import numpy as np
import pytest

from goblueprint.timeline.builder import _span_order


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
    [np.arange(-1, 40), np.array([-1, 3, 2**62, 2**63 - 1, 7])],  # a direct rank table; np.unique's
    ids=["small ids", "huge ids"],
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
