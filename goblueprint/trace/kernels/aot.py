"""Build the reader's loops ahead of time: ``python -m goblueprint.trace.kernels.aot OUT``.

Each exported function is first run by numba's JIT on harmless arguments of
the types the reader passes, which yields its exact signature, return type
included; numba.pycc then compiles the
same Python functions for those signatures into one extension module, written
to a temporary name and renamed into place so that readers never see half a
file.  Run by ``kernels.get()`` in a child process (numba stays out of the
reader's own process).

A loop declared ``nogil=True`` releases the GIL in the module as it does under the
JIT (numba.pycc would hold it): the Perfetto export encodes packets on worker threads
while the main thread reads the next rows.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def sample_args() -> dict[str, tuple]:
    """Harmless arguments (nothing to read) of the types the reader passes, per function."""
    from goblueprint.timeline import stay_codes, summary_codes, util_codes
    from goblueprint.timeline.builder import TimelineBuilder
    from goblueprint.timeline.builder_codes import E_WIDTH, SP_WIDTH
    from goblueprint.trace.kernels.codes import CS_SIZE, RS_SIZE
    from goblueprint.trace.ordering import EngineState
    from goblueprint.trace.store import COLUMNS

    buf = _ro(np.zeros(64, np.uint8))  # trace bytes: a read-only uint8 view
    e = np.zeros(0, np.int64)
    u = np.zeros(0, np.uint64)
    st = EngineState()
    tb = TimelineBuilder()

    def col(name: str) -> np.ndarray:  # a chunk's column, of the store's type
        return np.zeros(0, COLUMNS[name])

    # The summary's feed is all int64 (summary.py converts the columns).
    feed = [e] * 13
    b = np.zeros(0, np.bool_)
    lane, st8 = np.zeros(0, np.uint32), np.zeros(0, np.uint8)  # the levels' lanes and states
    util_cols = ("kind", "time", "proc", "resource_kind", "resource_id")
    util_state = (np.zeros(1, util_codes.STATE), np.zeros(0, util_codes.PSTATE), np.zeros(0, util_codes.GSTATE),
                  np.zeros(0, util_codes.POINT), e, np.zeros(0, util_codes.PROCS))  # fmt: skip
    return {
        "run_step": (
            buf,
            1,
            1.0,
            e,
            np.zeros(1, np.int64),
            *(e,) * 6,
            np.zeros(0, np.bool_),
            e,
            *(e,) * 5,
            np.zeros((0, CS_SIZE), np.int64),
            e,
            e,
            np.zeros(RS_SIZE, np.int64),
            16,
            st.sc,
            st.ep,
            *st.tables,
        ),
        "compact_goroutines": (st.tables[7], st.tables[0], 0),
        "sort_by_key": (e, 0, e),
        "scan_strings": (buf, 0, 0, 1, 1, u),
        "scan_stacks": (buf, 0, 0, 1, 1, u),
        "scan_cpu_samples": (buf, 0, 0, 1),
        "finish_stacks": (u, np.zeros(1, np.int64), u, u, u, u, np.zeros(1, np.uint64)),
        "scan_batch_headers": (buf, 0, 0, 1, 1, 1, 1, 1),
        "build_step": tb.loop_args(np.zeros((0, E_WIDTH), np.int64), np.zeros(0, np.float64), 0),
        "lane_order": (e, e, e, e, np.zeros(0, np.bool_)),
        # (a chunk's columns as the builder passes them: the store's, task ids viewed as int64)
        "pack_events": (
            np.zeros((0, E_WIDTH), np.int64), col("kind"), col("time"), *(e,) * 6, col("stack"),
            col("resource_kind"), col("resource_id"), e, col("old_state"), col("new_state"), col("reason"),
            col("transition_stack"), col("name"), col("message"), e, e, e,
        ),
        # (the spans as the loop writes them; their typed columns, as the spill keeps them)
        "group_spans": (
            np.zeros((0, SP_WIDTH), np.int64), np.zeros(0, np.uint8), e, e, e, np.zeros(0, np.uint8), e, e, e,
            np.zeros(0, np.int32), np.zeros(0, np.int32), e, e, e,
        ),
        "summary_step": (summary_codes.MODE_CHUNK, *feed, e, e, b, -2, *summary_codes.new_state()),
        "collect_stays": (
            e, e, col("new_state"), col("reason"), col("time"), col("stack"), e, np.zeros(0, np.int8),
            np.zeros((0, 0), np.bool_), np.zeros((0, 0), stay_codes.TRACK), np.zeros(0, stay_codes.STAY), 0, 0,
        ),
        "utilization_rows": (
            *map(col, util_cols), e, e, col("old_state"), col("new_state"), col("name"), col("value"),
            np.zeros(0, np.int8), *util_state, 0, False,
        ),
        "merge_spans": (lane, e, e, st8, lane, e, e, st8),
        "level_runs": (lane, e, e, st8, 1, 1, 0, lane, e, e, st8, st8, e, e, e),
        # (run once as the JIT compiles it: its per-state arrays and output hold every state)
        "merge_tile": (
            e, e, st8, 0, np.zeros(256, np.bool_), *(np.zeros(256, np.int64),) * 4, np.zeros(256, np.uint8),
        ),
        # (a batch of samples: name ids, times, values, rows; the grid's columns)
        "fold_counter_buckets": (
            lane, e, np.zeros(0, np.float64), e, e, 0, 1, 0,
            *(np.zeros((0, 0), np.int64 if t == "i" else np.float64) for t in "ififii"),
        ),
        "track_order": (e, e, e, e, e, e, e, e, e),
        "encode_track_events": (0, e, np.zeros(0, np.uint8), e, e, e, e, e),
        "window_packets": (0, 0, e, e, e, e, e, e, e, e, e),
        "dense_codes": (e,),
        # (the spans' columns as stored: lane_kind, g, label, state; state_names' map)
        "title_codes": (st8, e, lane, st8, np.zeros(256, np.uint8), e, 0),
        "counter_deltas": (e, e, np.zeros(0, np.float64), 0, e),
        # (no lanes: every offsets array holds its one 0)
        "lanes_packets": (
            e, e, e, np.zeros(0, np.uint8), np.zeros(1, np.int64), np.zeros(0, np.uint8), np.zeros(1, np.int64),
            np.zeros(1, np.int64), e, e, e, np.zeros(1, np.int64), e, e, e,
            np.zeros(1, np.int64), e, e, e, np.zeros(0, np.uint8), e, np.zeros(1, np.int64), e, e, 0, 0, 1,
        ),
    }  # fmt: skip


def build(out: Path) -> None:
    import importlib

    from goblueprint.trace.kernels import MODULES, NAMES

    mods = {m: importlib.import_module(path) for m, path in MODULES.items()}
    samples = sample_args()
    # JIT first: importing numba.pycc changes how numba types integer constants.
    sigs = {}
    nogil: dict[str, bool] = {}
    nrt: dict[str, bool] = {}
    for mod, names in NAMES.items():
        for fn in names:
            disp = getattr(mods[mod], fn)
            args = samples[fn]
            disp(*args)  # compiled as any call would be (numba's literal-value fallbacks included)
            argtypes = tuple(disp.typeof_pyval(a) for a in args)
            sigs[fn] = (disp.py_func, disp.overloads[argtypes].signature)
            nogil[fn] = bool(disp.targetoptions.get("nogil"))
            nrt[fn] = bool(disp.targetoptions.get("_nrt", True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc announces its deprecation
        from numba.pycc import CC

    name = out.name.split(".")[0]
    tmp = Path(tempfile.mkdtemp(prefix="aot-", dir=out.parent))
    _export_flags(
        {py_func for fn, (py_func, _sig) in sigs.items() if nogil[fn]},
        {py_func for fn, (py_func, _sig) in sigs.items() if not nrt[fn]},
    )
    cc = CC(name)
    cc.output_dir = str(tmp)
    cc.verbose = False
    for fn, (py_func, sig) in sigs.items():
        cc.export(fn, sig)(py_func)
    cc.compile()
    built = next(tmp.glob(name + "*"))
    os.replace(built, out)
    for p in tmp.iterdir():
        p.unlink()
    tmp.rmdir()


def _export_flags(nogil: set, no_nrt: set) -> None:
    """Compile the Python wrappers of NOGIL to release the GIL, as their ``nogil=True`` asks, and
    NO_NRT without reference counting, as their ``_nrt=False`` asks: numba.pycc compiles every
    export with one set of flags that does neither (it has no such options)."""
    from numba.pycc import compiler

    plain = compiler.compile_extra

    def compile_extra(typingctx, targetctx, func, args, return_type, flags, *rest, **kw):  # type: ignore[no-untyped-def]
        if func in nogil or func in no_nrt:
            flags = flags.copy()
            flags.release_gil = flags.release_gil or func in nogil
            flags.nrt = flags.nrt and func not in no_nrt
        return plain(typingctx, targetctx, func, args, return_type, flags, *rest, **kw)

    compiler.compile_extra = compile_extra


if __name__ == "__main__":
    build(Path(sys.argv[1]))
