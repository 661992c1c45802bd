"""Array helpers the hot paths share."""

from __future__ import annotations

import numpy as np


def unique(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)``: the sorted distinct values (of the flattened array).

    By a sort and a comparison of neighbours: numpy 2.4's ``np.unique`` without
    ``return_*`` goes through a hash set, about 50 times slower on arrays of many distinct
    values (4.8 s against 0.09 s on 5 M int64 timestamps here). For integers and strings:
    NaNs, unequal to themselves, would each be kept.
    """
    s = np.sort(np.asarray(a), axis=None)
    if s.size < 2:
        return s
    keep = np.empty(s.size, bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]
