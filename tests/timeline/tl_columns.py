"""Events of the Event API (e.g. tl_goref's FakeEvents, built by hand) as the pass's columns.

The timeline builder consumes the store's columns only (goblueprint.trace.store); synthetic
tests write their scenarios as events, which this turns into those columns (one Python step per
event is fine here: these are tests of a few events).
"""

from __future__ import annotations

from collections.abc import Sequence
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

_U64 = (1 << 64) - 1


def _stack(it: Interner, stack: Any) -> int:
    # Interned by frames, as the reader's stacks are (the Interner's own lookup by frames).
    return it._frames_id(tuple(stack.frames())) if stack else 0


def columns_of_events(events: Sequence[Any], it: Interner) -> dict[str, np.ndarray]:
    n = len(events)
    cols = {name: np.zeros(n, dtype) for name, dtype in COLUMNS.items() if name != "generation"}
    for name in ("old_state", "new_state", "reason", "name", "message"):
        cols[name].fill(-1)
    for i, ev in enumerate(events):
        kind = int(ev.kind)
        cols["kind"][i] = kind
        cols["time"][i] = ev.time
        cols["goroutine"][i] = ev.goroutine
        cols["proc"][i] = ev.proc
        cols["thread"][i] = ev.thread
        cols["stack"][i] = _stack(it, ev.stack)
        if kind == K_STATE:
            st = ev.state_transition()
            cols["resource_kind"][i], cols["resource_id"][i] = int(st.resource.kind), st.resource.id
            cols["old_state"][i], cols["new_state"][i] = int(st.old), int(st.new)
            cols["reason"][i] = it.string(st.reason)
            cols["transition_stack"][i] = _stack(it, st.stack)
        elif kind in (K_RANGE_BEGIN, K_RANGE_ACTIVE, K_RANGE_END):
            r = ev.range()
            cols["name"][i] = it.string(r.name)
            cols["resource_kind"][i], cols["resource_id"][i] = int(r.scope.kind), r.scope.id
        elif kind == K_METRIC:
            m = ev.metric()
            cols["name"][i] = it.string(m.name)
            cols["value"][i] = m.value if isinstance(m.value, int) else m.value.uint64()
        elif kind == K_LABEL:
            label = ev.label()
            cols["name"][i] = it.string(label.label)
            cols["resource_kind"][i], cols["resource_id"][i] = int(label.resource.kind), label.resource.id
        elif kind in (K_TASK_BEGIN, K_TASK_END):
            t = ev.task()
            cols["task"][i], cols["parent_task"][i] = t.id & _U64, t.parent & _U64
            cols["name"][i] = it.string(t.type)
        elif kind in (K_REGION_BEGIN, K_REGION_END):
            r = ev.region()
            cols["task"][i] = r.task & _U64
            cols["name"][i] = it.string(r.type)
        elif kind == K_LOG:
            log = ev.log()
            cols["task"][i] = log.task & _U64
            cols["name"][i] = it.string(log.category)
            cols["message"][i] = it.string(log.message)
    return cols
