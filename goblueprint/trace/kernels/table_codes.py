"""Codes of the compiled table loops (tables.py), without numba (see kernels/__init__.py)."""

from __future__ import annotations

# Varint outcomes; the error offset is the position the reader stopped at.
V_OK, V_EOF, V_UNEXPECTED_EOF, V_OVERFLOW = 0, 1, 2, 3

# Error codes of the batch loops.
E_NONE = 0
E_EVENT = 1  # wrong event byte: a = the byte; offset = its position
E_VARINT = 2  # a header varint failed: c = varint outcome
E_SIZE = 3  # string length / frame count above Go's maximum: u = the value
E_SHORT = 4  # string data cut short: a = bytes left, u = wanted
E_FRAME = 5  # a frame varint failed: a = frame number (1-based), b = field, c = outcome, u = stack ID

# validateStackStrings outcomes.
E_FUNC_ID = 1
E_FILE_ID = 2


# Record layouts the walker knows (Go's addStrings / addStacks / addCPUSamples).
K_STRINGS = 0  # EvString id len <len bytes>
K_STACKS = 1  # EvStack id nframes (pc funcID fileID line)*nframes
K_SAMPLES = 2  # EvCPUSample time m p g stack

B_END = 0  # at the end of the buffer
B_EOG = 1  # after an EndOfGeneration batch (the last record)
B_FULL = 2  # the record arrays are full: call again from the position returned
B_ASK = 3  # a batch it does not read: wire.read_batch must (Go's error, or its EOF case)
