"""The columnar store and its polars frame agree with event-by-event iteration."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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
    elif kind == K.EXPERIMENTAL:
        row.update(name=ev.experimental().name)
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


def _trace_core():
    """tests/trace_core's trace builders (its programs: CPU samples, coroutines, generations)."""
    path = Path(__file__).resolve().parents[1] / "trace_core" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_store_trace_core_helpers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_CORE = _trace_core()
ALLOCFREE = {"GODEBUG": "traceallocfree=1"}

TRACES = [
    pytest.param(("sched", "1.27", None), id="sched-1.27"),
    pytest.param(("small", "1.22", None), id="small-1.22"),
    # Only trace_core programs from here on: CPU samples (1.22's and 1.27's layouts) ...
    pytest.param(("cpusample", "1.22", None), id="cpusample-1.22"),
    pytest.param(("cpusample", "1.27", None), id="cpusample-1.27"),
    # ... experimental alloc/free events and coroutine switches ...
    pytest.param(("coro", "1.27", ALLOCFREE), id="coro-allocfree-1.27"),
    # ... several generations with user tasks, regions and logs (split by number before 1.26) ...
    pytest.param(("gens", "1.22", None), id="gens-1.22"),
    pytest.param(("gens", "1.27", None), id="gens-1.27"),
    # ... and a flight-recorder window (regions and ranges already open when it starts).
    pytest.param(("flight", "1.25", None), id="flight-1.25"),
]
_OWN = ("cpusample", "coro", "gens", "flight")


@pytest.fixture
def real_trace(request, go_trace, small_trace, go_toolchain):
    prog, go, env = request.param
    if prog in _OWN:
        return _CORE._trace_own_prog(prog, go, env, find=go_toolchain)
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


@pytest.mark.parametrize("real_trace", TRACES[:2] + TRACES[4:6], indirect=True)
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


def _columns(store: EventStore) -> dict[str, np.ndarray]:
    return {name: store.column(name) for name in COLUMNS}


def _same_store(a: EventStore, b: EventStore) -> None:
    """Same rows with the same strings and stacks (ids may differ: interning order is free)."""
    assert [g.index for g in a.generations] == [g.index for g in b.generations]
    ca, cb = _columns(a), _columns(b)
    for name in COLUMNS:
        x, y = ca[name], cb[name]
        assert x.dtype == y.dtype and len(x) == len(y), name
        if name in ("reason", "name", "message"):
            x = [None if i < 0 else a.strings[i] for i in x.tolist()]
            y = [None if i < 0 else b.strings[i] for i in y.tolist()]
        elif name in ("stack", "transition_stack"):
            x = [a.stacks[i] for i in x.tolist()]
            y = [b.stacks[i] for i in y.tolist()]
        else:
            x, y = x.tolist(), y.tolist()
        assert x == y, name
    assert sorted(a.strings) == sorted(b.strings) and set(a.stacks) == set(b.stacks)


@pytest.mark.parametrize("real_trace", [TRACES[5], TRACES[4]], indirect=True)
def test_plain_event_iterables_take_the_same_path(real_trace):
    # Events that do not come with a Reader's chunks (a generator, a filtered list)
    # are grouped into chunks: same columns as the Reader's own chunks.
    data = real_trace.read_bytes()
    from_reader = EventStore.from_events(Reader(data))
    from_events = EventStore.from_events(ev for ev in Reader(data))
    _same_store(from_reader, from_events)
    assert len(from_reader) == sum(1 for _ in Reader(data))


def test_truncated_multi_generation_traces(go_toolchain):
    # Cuts inside the header, at batch and generation boundaries and through the body:
    # the partial store holds exactly the events Go's reader yields before its error,
    # with what the Event API says of each, by both the Reader and the plain-events path.
    data = _CORE._trace_own_prog("gens", "1.27", None, find=go_toolchain).read_bytes()
    points = _CORE.cut_points(data)
    assert len(points) > 10
    failed = 0
    for cut in points:
        events, error = [], None
        try:
            for ev in Reader(data[:cut]):
                events.append(_expected_row(ev))
        except TraceError as exc:
            error = exc
        try:
            store = EventStore.from_events(Reader(data[:cut]), strict=False)
        except TraceError:
            # The header itself is cut: Reader() fails before any event, as above.
            assert not events and cut < 64
            continue
        assert (store.error is None) == (error is None), cut
        if error is not None:
            failed += 1
            assert store.error.message == error.message and store.error.offset == error.offset, cut
        assert len(store) == len(events), cut
        cols = _columns(store)
        for i, row in enumerate(events):
            assert _stored_row(store, cols, i) == row, (cut, i)
        _same_store(store, _partial_from_events(data[:cut]))
    assert failed > 5


def _partial_from_events(data: bytes) -> EventStore:
    return EventStore.from_events((ev for ev in Reader(data)), strict=False)
