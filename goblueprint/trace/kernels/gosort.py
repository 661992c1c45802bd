"""Go's ``slices.SortFunc`` (pattern-defeating quicksort), compiled with numba.

Go's reader sorts CPU samples and, when the earliest M cannot advance, its
frontier of batch cursors with ``slices.SortFunc``, which is not stable: the
order it leaves equal timestamps in decides which events come first.  To
yield events in exactly Go's order we sort the same way, step for step, as
``pdqsortCmpFunc`` in ``$GOROOT/src/slices/zsortanyfunc.go`` (Go 1.27.3; the
algorithm is unchanged since Go 1.21).

There is one implementation: ``sort_by_key`` (callable from Python and from
other ``@njit`` code) sorts an array of indices by ``keys[index]``;
``goblueprint.trace.gosort.sort_func`` is the Python-facing wrapper for lists.  Go recurses on the
smaller half of each partition; here that recursion is an explicit stack
processed in the same order, so the swaps, and so the order of ties, are
identical.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_MAX_INSERTION = 12  # pdqsort: insertion sort at or below this length
_SHORTEST_NINTHER = 50  # choosePivot: Tukey's ninther from this length on
_MAX_SWAPS = 4 * 3  # choosePivot: every median swapped -> the range is descending
_MAX_STEPS = 5  # partialInsertionSort: adjacent out-of-order pairs it fixes
_SHORTEST_SHIFTING = 50  # partialInsertionSort: shorter ranges are not shifted
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2  # Go's sortedHint values
# Go recurses only into the smaller half, so nesting is at most log2(n) + 1 <= 64 deep.
_STACK_DEPTH = 65


@njit(cache=True, nogil=True)
def _bit_len(x):  # pragma: no cover - compiled
    """math/bits.Len for a non-negative int."""
    n = 0
    while x > 0:
        x >>= 1
        n += 1
    return n


@njit(cache=True, nogil=True)
def _insertion_sort(idx, keys, a, b):  # pragma: no cover - compiled
    for i in range(a + 1, b):
        j = i
        while j > a and keys[idx[j]] < keys[idx[j - 1]]:
            idx[j], idx[j - 1] = idx[j - 1], idx[j]
            j -= 1


@njit(cache=True, nogil=True)
def _sift_down(idx, keys, lo, hi, first):  # pragma: no cover - compiled
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and keys[idx[first + child]] < keys[idx[first + child + 1]]:
            child += 1
        if not keys[idx[first + root]] < keys[idx[first + child]]:
            return
        idx[first + root], idx[first + child] = idx[first + child], idx[first + root]
        root = child


@njit(cache=True, nogil=True)
def _heap_sort(idx, keys, a, b):  # pragma: no cover - compiled
    first = a
    hi = b - a
    for i in range((hi - 1) // 2, -1, -1):
        _sift_down(idx, keys, i, hi, first)
    for i in range(hi - 1, -1, -1):
        idx[first], idx[first + i] = idx[first + i], idx[first]
        _sift_down(idx, keys, 0, i, first)


@njit(cache=True, nogil=True)
def _partition(idx, keys, a, b, pivot):  # pragma: no cover - compiled
    """(new pivot position, whether data[a:b] was already partitioned)."""
    idx[a], idx[pivot] = idx[pivot], idx[a]
    p = keys[idx[a]]  # the pivot stays at a until the end, so its key can be read once
    i = a + 1
    j = b - 1
    while i <= j and keys[idx[i]] < p:
        i += 1
    while i <= j and not keys[idx[j]] < p:
        j -= 1
    if i > j:
        idx[j], idx[a] = idx[a], idx[j]
        return j, True
    idx[i], idx[j] = idx[j], idx[i]
    i += 1
    j -= 1
    while True:
        while i <= j and keys[idx[i]] < p:
            i += 1
        while i <= j and not keys[idx[j]] < p:
            j -= 1
        if i > j:
            break
        idx[i], idx[j] = idx[j], idx[i]
        i += 1
        j -= 1
    idx[j], idx[a] = idx[a], idx[j]
    return j, False


@njit(cache=True, nogil=True)
def _partition_equal(idx, keys, a, b, pivot):  # pragma: no cover - compiled
    idx[a], idx[pivot] = idx[pivot], idx[a]
    p = keys[idx[a]]
    i = a + 1
    j = b - 1
    while True:
        while i <= j and not p < keys[idx[i]]:
            i += 1
        while i <= j and p < keys[idx[j]]:
            j -= 1
        if i > j:
            break
        idx[i], idx[j] = idx[j], idx[i]
        i += 1
        j -= 1
    return i


@njit(cache=True, nogil=True)
def _partial_insertion_sort(idx, keys, a, b):  # pragma: no cover - compiled
    """True if data[a:b] ends up sorted after fixing at most _MAX_STEPS pairs."""
    i = a + 1
    for _ in range(_MAX_STEPS):
        while i < b and not keys[idx[i]] < keys[idx[i - 1]]:
            i += 1
        if i == b:
            return True
        if b - a < _SHORTEST_SHIFTING:
            return False
        idx[i], idx[i - 1] = idx[i - 1], idx[i]
        if i - a >= 2:
            # Go's loop runs down to index 1, not to a: same here.
            j = i - 1
            while j >= 1:
                if not keys[idx[j]] < keys[idx[j - 1]]:
                    break
                idx[j], idx[j - 1] = idx[j - 1], idx[j]
                j -= 1
        if b - i >= 2:
            j = i + 1
            while j < b:
                if not keys[idx[j]] < keys[idx[j - 1]]:
                    break
                idx[j], idx[j - 1] = idx[j - 1], idx[j]
                j += 1
    return False


@njit(cache=True, nogil=True)
def _break_patterns(idx, a, b):  # pragma: no cover - compiled
    length = b - a
    if length >= 8:
        # Go's xorshift seeded by the length; uint64 arithmetic wraps like Go's.
        r = np.uint64(length)
        mask = (np.uint64(1) << np.uint64(_bit_len(length))) - np.uint64(1)
        mid = a + (length // 4) * 2
        for i in range(mid - 1, mid + 2):
            r ^= r << np.uint64(13)
            r ^= r >> np.uint64(7)
            r ^= r << np.uint64(17)
            other = np.int64(r & mask)
            if other >= length:
                other -= length
            idx[i], idx[a + other] = idx[a + other], idx[i]


@njit(cache=True, nogil=True)
def _median(idx, keys, a, b, c, swaps):  # pragma: no cover - compiled
    """Go's medianCmpFunc: (the one of a, b, c holding the median key, swaps + order2 swaps)."""
    if keys[idx[b]] < keys[idx[a]]:
        swaps += 1
        a, b = b, a
    if keys[idx[c]] < keys[idx[b]]:
        swaps += 1
        b, c = c, b
    if keys[idx[b]] < keys[idx[a]]:
        swaps += 1
        a, b = b, a
    return b, swaps


@njit(cache=True, nogil=True)
def _choose_pivot(idx, keys, a, b):  # pragma: no cover - compiled
    """(pivot position, sortedHint)."""
    n = b - a
    swaps = 0
    i = a + n // 4 * 1
    j = a + n // 4 * 2
    k = a + n // 4 * 3
    if n >= 8:
        if n >= _SHORTEST_NINTHER:
            i, swaps = _median(idx, keys, i - 1, i, i + 1, swaps)
            j, swaps = _median(idx, keys, j - 1, j, j + 1, swaps)
            k, swaps = _median(idx, keys, k - 1, k, k + 1, swaps)
        j, swaps = _median(idx, keys, i, j, k, swaps)
    if swaps == 0:
        return j, _INCREASING
    if swaps == _MAX_SWAPS:
        return j, _DECREASING
    return j, _UNKNOWN


@njit(cache=True, nogil=True)
def _reverse_range(idx, a, b):  # pragma: no cover - compiled
    i = a
    j = b - 1
    while i < j:
        idx[i], idx[j] = idx[j], idx[i]
        i += 1
        j -= 1


@njit(cache=True, nogil=True)
def _pdqsort(idx, keys, a, b, limit):  # pragma: no cover - compiled
    # Rows: the caller's loop state to resume once Go's recursive call on the
    # smaller half returns (a, b, limit, wasBalanced, wasPartitioned).
    stack = np.empty((_STACK_DEPTH, 5), dtype=np.int64)
    top = 0
    was_balanced = True
    was_partitioned = True
    while True:
        length = b - a
        if length <= _MAX_INSERTION:
            _insertion_sort(idx, keys, a, b)
        elif limit == 0:
            _heap_sort(idx, keys, a, b)  # too many bad pivots
        else:
            if not was_balanced:
                _break_patterns(idx, a, b)
                limit -= 1
            pivot, hint = _choose_pivot(idx, keys, a, b)
            if hint == _DECREASING:
                _reverse_range(idx, a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            sorted_now = False
            if was_balanced and was_partitioned and hint == _INCREASING:
                sorted_now = _partial_insertion_sort(idx, keys, a, b)
            if not sorted_now:
                if a > 0 and not keys[idx[a - 1]] < keys[idx[pivot]]:
                    # Many duplicates: split off the run equal to the pivot.
                    a = _partition_equal(idx, keys, a, b, pivot)
                    continue
                mid, already = _partition(idx, keys, a, b, pivot)
                was_partitioned = already
                left = mid - a
                right = b - mid
                threshold = length // 8
                stack[top, 2] = limit
                stack[top, 4] = 1 if was_partitioned else 0
                if left < right:
                    stack[top, 3] = 1 if left >= threshold else 0
                    stack[top, 0] = mid + 1
                    stack[top, 1] = b
                    b = mid
                else:
                    stack[top, 3] = 1 if right >= threshold else 0
                    stack[top, 0] = a
                    stack[top, 1] = mid
                    a = mid + 1
                top += 1
                # Go's recursive call starts with fresh state.
                was_balanced = True
                was_partitioned = True
                continue
        # This range is sorted: return to the caller's loop, if any.
        if top == 0:
            return
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        limit = stack[top, 2]
        was_balanced = stack[top, 3] != 0
        was_partitioned = stack[top, 4] != 0


@njit(cache=True, nogil=True)
def sort_by_key(idx, n, keys):  # pragma: no cover - compiled
    """Sort ``idx[:n]`` in place by ``keys[idx[i]]`` exactly as Go's slices.SortFunc.

    ``idx``: int64 array of indices into ``keys`` (int64 array); entries past
    ``n`` are left alone.  Equal keys end up in the order Go leaves them.
    Indices are not bounds-checked (numba does not check): they must be valid.
    """
    if n < 0 or n > idx.shape[0]:
        raise ValueError("sort_by_key: n out of range")
    _pdqsort(idx, keys, 0, n, _bit_len(n))
