"""The interner's distinct string ids with their inverse: np.unique's, by a table of ids seen."""

from __future__ import annotations

import numpy as np
import pytest

from goblueprint.trace.store import _distinct_inverse


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.uint32])
@pytest.mark.parametrize(
    ("lo", "hi", "n"),
    [(0, 50, 1000), (-20, 30, 500), (10**6, 10**6 + 300, 2000), (0, 10**9, 100), (0, 0, 0), (7, 7, 3)],
)
def test_distinct_inverse_is_numpys_unique(dtype: type, lo: int, hi: int, n: int) -> None:
    # Dense ids (the table), sparse ones (np.unique itself), ids below 0 and far above it.
    if np.dtype(dtype).kind == "u" and lo < 0:
        pytest.skip("no negative ids in an unsigned column")
    raw = np.random.default_rng(n).integers(lo, hi + 1, n).astype(dtype)
    uniq, inv = _distinct_inverse(raw)
    want_uniq, want_inv = np.unique(raw, return_inverse=True)
    assert uniq.dtype == want_uniq.dtype
    assert uniq.tolist() == want_uniq.tolist()
    assert inv.tolist() == want_inv.reshape(-1).tolist()
