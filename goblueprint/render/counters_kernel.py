"""The timeline page's counter thinning loop (render.page_counters): samples folded into buckets.

A counter with more samples than the page keeps of one is summed up per bucket of the trace:
first and last time, largest value, the value of its last row, its first and last row.  The
buckets of all such counters are one grid (a row per counter, a column per bucket) updated
in place a batch of samples at a time, in table order, so no batch is sorted and no partial
sums are combined.  There is no Python twin of this loop.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def fold_counter_buckets(
    name, time, value, row, slot, origin, width, lo, t_first, v_max, t_last, v_last, i_first, i_last
):  # pragma: no cover - compiled
    """Fold the samples (NAME string id, TIME, VALUE, ROW in the table) whose counter has a
    row of the grid (SLOT[name] >= 0) into its bucket (TIME - ORIGIN) // WIDTH, column that
    minus LO of the grid T_FIRST, V_MAX, T_LAST, V_LAST, I_FIRST, I_LAST (I_FIRST < 0: a bucket
    not met yet).  Samples come in table order, so the last met is a bucket's last row.

    V_MAX ignores NaN as numpy's fmax does (NaN only if every value is NaN): the value kept
    is the first of the largest."""
    for i in range(name.shape[0]):
        s = slot[name[i]]
        if s < 0:
            continue
        b = (time[i] - origin) // width - lo
        t, v, r = time[i], value[i], row[i]
        if i_first[s, b] < 0:
            t_first[s, b] = t
            v_max[s, b] = v
            t_last[s, b] = t
            v_last[s, b] = v
            i_first[s, b] = r
            i_last[s, b] = r
            continue
        if t < t_first[s, b]:
            t_first[s, b] = t
        if t > t_last[s, b]:
            t_last[s, b] = t
        m = v_max[s, b]
        if v > m or m != m:
            v_max[s, b] = v
        if r < i_first[s, b]:
            i_first[s, b] = r
        if r > i_last[s, b]:
            i_last[s, b] = r
            v_last[s, b] = v
