"""The pass's columns for events that are not the reader's: objects with the Event API.

The reader hands its events over as column chunks (``store.chunk_columns``);
anything else that speaks the Event API (Go's own events replayed by the tests'
goref, a list of Events) gets the same columns here, one Python step per event.
That is the cost of such sources only: the columnar consumers have a single
implementation, which reads columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from goblueprint.timeline._api import (
    K_LABEL,
    K_LOG,
    K_METRIC,
    K_RANGE_ACTIVE,
    K_RANGE_BEGIN,
    K_RANGE_END,
    K_REGION_BEGIN,
    K_REGION_END,
    K_STATE,
    K_TASK_BEGIN,
    K_TASK_END,
)
from goblueprint.trace.store import COLUMNS, Interner

CHUNK_ROWS = 32768
_U64 = (1 << 64) - 1  # task ids are uint64s; an API may give NoTask as -1
_RANGES = (K_RANGE_BEGIN, K_RANGE_ACTIVE, K_RANGE_END)


def api_chunks(events: Iterable[Any], interner: Interner) -> Iterator[dict[str, np.ndarray]]:
    """Columns (the store's, but generation) of EVENTS, CHUNK_ROWS rows at a time."""
    rows: list[tuple] = []
    names = [n for n in COLUMNS if n != "generation"]
    for ev in events:
        rows.append(_row(ev, interner))
        if len(rows) == CHUNK_ROWS:
            yield _columns(rows, names)
            rows = []
    if rows:
        yield _columns(rows, names)


def _columns(rows: list[tuple], names: list[str]) -> dict[str, np.ndarray]:
    return {
        name: np.array(col, dtype=COLUMNS[name])
        for name, col in zip(names, zip(*rows, strict=True), strict=True)
    }


def _stack(stack: Any, interner: Interner) -> int:
    return interner.frames_id(tuple(stack.frames())) if stack else 0


def _row(ev: Any, it: Interner) -> tuple:
    """One event's values, in the store's column order."""
    kind = int(ev.kind)
    rk, rid, old, new, reason, tstack = 0, 0, -1, -1, -1, 0
    name, message, value, task, parent = -1, -1, 0, 0, 0
    if kind == K_STATE:
        st = ev.state_transition()
        rk, rid, old, new = int(st.resource.kind), st.resource.id, int(st.old), int(st.new)
        reason, tstack = it.string(st.reason), _stack(st.stack, it)
    elif kind in _RANGES:
        r = ev.range()
        name, rk, rid = it.string(r.name), int(r.scope.kind), r.scope.id
    elif kind == K_TASK_BEGIN or kind == K_TASK_END:
        t = ev.task()
        name, task, parent = it.string(t.type), t.id & _U64, t.parent & _U64
    elif kind == K_REGION_BEGIN or kind == K_REGION_END:
        r = ev.region()
        name, task = it.string(r.type), r.task & _U64
    elif kind == K_LOG:
        lg = ev.log()
        name, message, task = it.string(lg.category), it.string(lg.message), lg.task & _U64
    elif kind == K_METRIC:
        m = ev.metric()
        v = m.value
        if not isinstance(v, int):  # Go's Value, or the reader's (its uint64())
            v = v.uint64() if hasattr(v, "uint64") else getattr(v, "scalar", 0)
        name, value = it.string(m.name), v if isinstance(v, int) else 0
    elif kind == K_LABEL:
        lb = ev.label()
        name, rk, rid = it.string(lb.label), int(lb.resource.kind), lb.resource.id
    return (kind, ev.time, ev.goroutine, ev.proc, ev.thread, _stack(ev.stack, it), rk, rid, old, new,
            reason, tstack, name, message, value, task, parent)  # fmt: skip
