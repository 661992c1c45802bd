"""The columnar store and its polars frame agree with event-by-event iteration."""

from __future__ import annotations

import numpy as np
import pytest

from goblueprint.errors import TraceError
from goblueprint.trace.events import EventKind
from goblueprint.trace.reader import Reader, open_trace
from goblueprint.trace.store import COLUMNS, EventStore, events_frame, iter_generations

pytestmark = pytest.mark.slow

K = EventKind


def _expected_row(ev) -> dict:
    """What the store must hold for one event, straight from the Event API."""
    row = {
        "kind": int(ev.kind),
        "time": ev.time,
        "goroutine": ev.goroutine,
        "proc": ev.proc,
        "thread": ev.thread,
        "stack": tuple(ev.stack.frames()),
        "resource": None,
        "states": None,
        "reason": None,
        "transition_stack": (),
        "name": None,
        "message": None,
        "value": None,
        "task": None,
        "parent_task": None,
    }
    kind = ev.kind
    if kind == K.STATE_TRANSITION:
        st = ev.state_transition()
        row.update(
            resource=(int(st.resource.kind), st.resource.id),
            states=(st.old, st.new),
            reason=st.reason,
            transition_stack=tuple(st.stack.frames()),
        )
    elif kind == K.METRIC:
        m = ev.metric()
        row.update(name=m.name, value=m.value.scalar)
    elif kind in (K.RANGE_BEGIN, K.RANGE_ACTIVE, K.RANGE_END):
        r = ev.range()
        row.update(name=r.name, resource=(int(r.scope.kind), r.scope.id))
    elif kind == K.LABEL:
        lb = ev.label()
        row.update(name=lb.label, resource=(int(lb.resource.kind), lb.resource.id))
    elif kind in (K.TASK_BEGIN, K.TASK_END):
        t = ev.task()
        row.update(name=t.type, task=t.id, parent_task=t.parent)
    elif kind in (K.REGION_BEGIN, K.REGION_END):
        rg = ev.region()
        row.update(name=rg.type, task=rg.task)
    elif kind == K.LOG:
        lg = ev.log()
        row.update(name=lg.category, message=lg.message, task=lg.task)
    return row


def _stored_row(store: EventStore, cols: dict, i: int) -> dict:
    s = store.strings

    def text(col):
        sid = int(cols[col][i])
        return None if sid < 0 else s[sid]

    kind = int(cols["kind"][i])
    has_resource = int(cols["resource_kind"][i]) != 0 or kind in (
        K.STATE_TRANSITION, K.RANGE_BEGIN, K.RANGE_ACTIVE, K.RANGE_END, K.LABEL,
    )  # fmt: skip
    return {
        "kind": kind,
        "time": int(cols["time"][i]),
        "goroutine": int(cols["goroutine"][i]),
        "proc": int(cols["proc"][i]),
        "thread": int(cols["thread"][i]),
        "stack": store.stacks[int(cols["stack"][i])],
        "resource": (int(cols["resource_kind"][i]), int(cols["resource_id"][i])) if has_resource else None,
        "states": None if cols["old_state"][i] < 0 else (int(cols["old_state"][i]), int(cols["new_state"][i])),
        "reason": text("reason"),
        "transition_stack": store.stacks[int(cols["transition_stack"][i])],
        "name": text("name"),
        "message": text("message"),
        "value": int(cols["value"][i]) if kind == K.METRIC else None,
        "task": int(cols["task"][i]) if kind in (K.TASK_BEGIN, K.TASK_END, K.REGION_BEGIN, K.REGION_END, K.LOG)
        else None,
        "parent_task": int(cols["parent_task"][i]) if kind in (K.TASK_BEGIN, K.TASK_END) else None,
    }  # fmt: skip


TRACES = [
    pytest.param(("sched", "1.27"), id="sched-1.27"),
    pytest.param(("small", "1.22"), id="small-1.22"),
]


@pytest.fixture
def real_trace(request, go_trace, small_trace):
    prog, go = request.param
    return small_trace(go) if prog == "small" else go_trace(prog, go=go)


@pytest.mark.parametrize("real_trace", TRACES, indirect=True)
def test_store_matches_event_iteration(real_trace, gohelper):
    expected = [_expected_row(ev) for ev in open_trace(real_trace)]
    store = EventStore.open(real_trace)
    assert len(store) == len(expected) == gohelper.read(real_trace)[0]
    cols = {name: store.column(name) for name in COLUMNS}
    for name, arr in cols.items():
        assert arr.dtype == COLUMNS[name] and len(arr) == len(expected), name
    for i, row in enumerate(expected):
        assert _stored_row(store, cols, i) == row, (i, row)
    # Interning: no duplicate strings or stacks, id 0 is the empty one.
    assert store.strings[0] == "" and len(set(store.strings)) == len(store.strings)
    assert store.stacks[0] == () and len(set(store.stacks)) == len(store.stacks)
    # Generations: contiguous indexes, each starting with a Sync, ascending times.
    gens = [g.index for g in store.generations]
    assert gens == list(range(len(gens)))
    for g in store.generations:
        assert g.columns["kind"][0] == K.SYNC and (g.columns["generation"] == g.index).all()
    assert (np.diff(cols["time"]) > 0).all()
    syncs = int((cols["kind"] == K.SYNC).sum())
    assert len(store.generations) == syncs - 1


@pytest.mark.parametrize("real_trace", TRACES, indirect=True)
def test_polars_frame_matches_columns(real_trace):
    store = EventStore.open(real_trace)
    df = store.to_polars()
    assert df.columns == list(COLUMNS) and df.height == len(store)
    cols = {name: store.column(name) for name in COLUMNS}
    kinds = cols["kind"]
    assert df["kind"].cast(str).to_list() == [EventKind(k).name for k in kinds]
    for name in (
        "generation",
        "time",
        "goroutine",
        "proc",
        "thread",
        "stack",
        "resource_kind",
        "resource_id",
    ):
        assert (df[name].to_numpy() == cols[name]).all(), name
    for name in ("reason", "name", "message"):
        ids = cols[name]
        want = [None if i < 0 else store.strings[i] for i in ids]
        assert df[name].to_list() == want, name
    metric = kinds == K.METRIC
    assert df["value"].is_null().to_numpy().tolist() == (~metric).tolist()
    assert (df["value"].to_numpy()[metric] == cols["value"][metric]).all()
    transition = kinds == K.STATE_TRANSITION
    assert (df["old_state"].is_not_null().to_numpy() == transition).all()
    # The convenience entry point builds the same frame.
    assert events_frame(real_trace).equals(df)
    frames = store.stacks_frame()
    assert frames.height == sum(len(s) for s in store.stacks)


def test_streaming_and_partial_store(small_trace):
    data = small_trace("1.22").read_bytes()
    whole = list(iter_generations(Reader(data)))
    assert sum(len(g) for g in whole) == sum(1 for _ in Reader(data))
    cut = data[: int(len(data) * 0.9)]
    read_before_error = 0
    with pytest.raises(TraceError):
        for _ in Reader(cut):
            read_before_error += 1
    with pytest.raises(TraceError):
        EventStore.from_events(Reader(cut))
    partial = EventStore.from_events(Reader(cut), strict=False)
    assert isinstance(partial.error, TraceError)
    assert len(partial) == read_before_error
    assert partial.to_polars().height == read_before_error
