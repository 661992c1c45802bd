"""The pprof stays' compiled loop: every goroutine state transition, every profile type at once.

A stay of type T is a goroutine's time in T's state, from the transition that entered the
state with a reason T tracks to the next transition to another state (cmd/trace/pprof.go).
The per-goroutine tracking lives in ``TRACK`` rows (one per type and goroutine slot); ended
stays are appended to ``STAY`` rows.  There is no Python twin of this loop.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def collect_stays(
    slot, g, new, reason, time, stack, seq, type_state, starts, track, out, n_out, row
):  # pragma: no cover - compiled
    """Goroutine transitions ROW.. (SLOT, G id, NEW state, REASON string id, TIME, event STACK,
    1-based SEQ) against TYPE_STATE[t] (the state type t profiles) and STARTS[t, reason] (does
    that reason open a stay of type t).  Ended stays go to OUT from N_OUT on.  Returns (n_out,
    rows done): fewer than all rows when OUT had no room for a row's stays (grow it, call again).
    """
    n_types = type_state.shape[0]
    for i in range(row, slot.shape[0]):
        if n_out + n_types > out.shape[0]:
            return n_out, i
        s = slot[i]
        state = new[i]
        for t in range(n_types):
            rec = track[t, s]
            if not rec.open:
                if state == type_state[t] and starts[t, reason[i]]:
                    rec.open = True
                    rec.start = time[i]
                    rec.stack = stack[i]
                continue
            if state == type_state[t]:
                continue
            rec.open = False
            o = out[n_out]
            o.type = t
            o.g = g[i]
            o.start = rec.start
            o.end = time[i]
            o.stack = rec.stack
            o.end_seq = seq[i]
            n_out += 1
    return n_out, slot.shape[0]
