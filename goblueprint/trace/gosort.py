"""Go's ``slices.SortFunc`` for Python lists: a wrapper over the compiled pdqsort.

The algorithm (exactly Go's, ties included) lives in ``kernels/gosort.py``;
this wrapper sorts indices by key with it and reorders the list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from goblueprint.trace import kernels


def sort_by_key(idx: np.ndarray, n: int, keys: np.ndarray) -> None:
    """Sort ``idx[:n]`` (int64 indices) in place by ``keys[idx[i]]`` (int64), as Go does."""
    kernels.get().sort_by_key(idx, n, keys)


def sort_func(data: list[Any], key: Callable[[Any], int]) -> None:
    """Sort ``data`` in place by ``key`` exactly as Go's slices.SortFunc(cmp.Compare(key)).

    Keys must be ints within int64 (as Go's trace timestamps are); a key outside
    that range raises OverflowError.
    """
    n = len(data)
    keys = np.fromiter((key(x) for x in data), dtype=np.int64, count=n)
    idx = np.arange(n, dtype=np.int64)
    sort_by_key(idx, n, keys)
    data[:] = [data[i] for i in idx.tolist()]
