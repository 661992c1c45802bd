"""The compiled ordering engine's Python face: its state between generations.

``EngineState`` holds the scheduler state the engine carries from one
generation to the next as plain numpy arrays, and runs the compiled
``run_step`` over each generation, a bounded number of events at a time
(see kernels/engine.py).
"""

from __future__ import annotations

import numpy as np

from goblueprint.trace import kernels
from goblueprint.trace.kernels.codes import (
    CS_SIZE,
    EP_SIZE,
    RS_SIZE,
    RS_STATUS,
    SC_FL_FREE,
    SC_GN,
    SC_RG_FREE,
    SC_SIZE,
    ST_DONE,
)

_EMPTY = -1  # an empty bucket of the engine's ID maps (kernels/engine.py)


class EngineState:
    """Scheduler state carried from one generation to the next (plain numpy arrays)."""

    def __init__(self) -> None:
        self.sc = np.zeros(SC_SIZE, dtype=np.int64)
        self.sc[SC_FL_FREE] = -1
        self.sc[SC_RG_FREE] = -1
        self.ep = np.zeros(EP_SIZE, dtype=np.int64)
        z = np.zeros
        # G, P, M rows; range and region pools; task map and rows; goroutine/proc/thread maps.
        self.tables = [z((64, 7), np.int64), z((16, 6), np.int64), z((16, 3), np.int64)]
        self.tables += [z((16, 4), np.int64), z((16, 3), np.int64)]
        self.tables += [np.full((16, 2), _EMPTY, np.int64), z((16, 2), np.int64)]
        self.tables += [np.full((16, 2), _EMPTY, np.int64) for _ in range(3)]
        # The generation being ordered (begin): its inputs, cursors and run state.
        self._inputs: tuple = ()
        self._cursors = np.zeros((0, CS_SIZE), dtype=np.int64)
        self._c_time = np.zeros(0, dtype=np.int64)
        self._heap = np.zeros(0, dtype=np.int64)
        self._rs = np.zeros(RS_SIZE, dtype=np.int64)

    @property
    def G(self) -> np.ndarray:
        return self.tables[0]

    @property
    def P(self) -> np.ndarray:
        return self.tables[1]

    @property
    def M(self) -> np.ndarray:
        return self.tables[2]

    def compact(self) -> None:
        gn = int(self.sc[SC_GN])
        if gn > 1024:
            self.sc[SC_GN] = kernels.get().compact_goroutines(self.tables[7], self.tables[0], gn)

    def begin(self, inputs: tuple) -> None:
        """Start ordering a generation: INPUTS is (trace bytes, then reader._engine_inputs)."""
        ncur = len(inputs[3])
        self._inputs = inputs
        self._cursors = np.zeros((ncur, CS_SIZE), dtype=np.int64)
        self._c_time = np.zeros(ncur, dtype=np.int64)
        self._heap = np.zeros(ncur, dtype=np.int64)
        self._rs = np.zeros(RS_SIZE, dtype=np.int64)

    def step(self, cap: int) -> tuple[np.ndarray, tuple, np.ndarray, bool]:
        """The next at most CAP events of the generation begun: (columns, error info,
        frontier, done); done once the generation is finished or has failed."""
        out, tables, errinfo, front = kernels.get().run_step(
            *self._inputs,
            self._cursors,
            self._c_time,
            self._heap,
            self._rs,
            cap,
            self.sc,
            self.ep,
            *self.tables,
        )
        self.tables = list(tables)
        return out, errinfo, front, int(self._rs[RS_STATUS]) == ST_DONE
