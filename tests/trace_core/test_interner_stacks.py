"""Interner.stack_ids: the pass's stack ids of a generation's raw stack ids, chunk after chunk."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from goblueprint.trace.events import StackFrame
from goblueprint.trace.store import Interner


def _table(stacks: dict[int, list[tuple[int, int, int, int]]]) -> SimpleNamespace:
    """A generation's stack table as the reader lays it out: ids sorted (0 included), each
    stack's frames [stack_lo, stack_hi) of the frame columns, names as string ids."""
    ids = sorted({0, *stacks})
    lo, hi, pc, func, file, line = [], [], [], [], [], []
    for sid in ids:
        lo.append(len(pc))
        for p, fn, fl, ln in stacks.get(sid, []):
            pc.append(p), func.append(fn), file.append(fl), line.append(ln)
        hi.append(len(pc))
    u = np.uint64
    return SimpleNamespace(
        stack_ids=np.array(ids, u), stack_lo=np.array(lo, u), stack_hi=np.array(hi, u),
        frame_pc=np.array(pc, u), frame_func=np.array(func, u), frame_file=np.array(file, u),
        frame_line=np.array(line, u), strings=["", "main", "f", "x.go"],
    )  # fmt: skip


def test_stack_ids_across_chunks_and_generations() -> None:
    it = Interner()
    gen1 = _table({1: [(10, 1, 3, 5)], 2: [(11, 2, 3, 6), (10, 1, 3, 5)], 4: [], 9: [(12, 2, 3, 7)]})
    raw = np.array([0, 1, 2, 3, 4, 9, 10, 2**64 - 1, 2, 1], np.uint64)
    got = it.stack_ids(gen1, raw)
    # Unknown ids (3, 10, 2**64-1), 0 and a stack without frames (4) are no stack.
    assert got.dtype == np.int32
    assert got.tolist() == [0, 1, 2, 0, 0, 3, 0, 0, 2, 1]
    assert it.stacks[2] == (StackFrame(11, "f", "x.go", 6), StackFrame(10, "main", "x.go", 5))
    # A later chunk of the same generation: the same ids, new ones numbered on.
    assert it.stack_ids(gen1, np.array([9, 9, 1, 0], np.uint64)).tolist() == [3, 3, 1, 0]
    # The next generation numbers its stacks anew: same frames, same id; new frames, a new id.
    gen2 = _table({1: [(12, 2, 3, 7)], 3: [(13, 1, 3, 8)]})
    assert it.stack_ids(gen2, np.array([1, 2, 3, 9], np.uint64)).tolist() == [3, 0, 4, 0]
    assert len(it.stacks) == 5


def test_stack_ids_of_sparse_ids() -> None:
    """Ids far apart (no direct table) map as dense ones do."""
    it = Interner()
    big = 2**40
    gen = _table({3: [(10, 1, 3, 5)], big: [(11, 2, 3, 6)]})
    got = it.stack_ids(gen, np.array([big, 3, big + 1, 0, big], np.uint64))
    assert got.tolist() == [2, 1, 0, 0, 2]
