"""Reader of Go's ``.gopclntab``: function names and entry ranges.

This is what a stripped binary (``-ldflags=-s -w``) still carries.  Facts come
from Go's ``debug/gosym/pclntab.go`` and ``internal/abi/symtab.go``: the layout
is the same from Go 1.18 to 1.27 except for the magic (1.18-1.19: 0xfffffff0,
1.20+: 0xfffffff1); 1.16-1.17 lack the text-start word and store absolute-PC
fields the same way.  Only the function table is read, not pc-value tables.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from goblueprint.errors import BinaryError

# magic -> (version name, header word index of: nfunc, textStart or None, funcnametab, functab)
_LAYOUTS = {
    0xFFFFFFF1: ("go1.20", 0, 2, 3, 7),
    0xFFFFFFF0: ("go1.18", 0, 2, 3, 7),
    0xFFFFFFFA: ("go1.16", 0, None, 2, 6),
}
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_HEAD = struct.Struct("<IBBBB")


@dataclass(frozen=True)
class PcFunc:
    name: str
    entry: int
    end: int


def read_functions(data: bytes | memoryview, text_start: int) -> tuple[str, list[PcFunc]]:
    """Parse the function table; ``text_start`` is the address of .text (Go's own fallback)."""
    buf = bytes(data) if isinstance(data, memoryview) else data
    if len(buf) < 16:
        raise BinaryError(f".gopclntab too short ({len(buf)} bytes)")
    magic, pad1, pad2, quantum, ptrsize = _HEAD.unpack_from(buf, 0)
    if pad1 or pad2 or quantum not in (1, 2, 4) or ptrsize != 8:
        raise BinaryError(f".gopclntab has an unsupported header (magic {magic:#x}, ptrsize {ptrsize})")
    layout = _LAYOUTS.get(magic)
    if layout is None:
        raise BinaryError(f".gopclntab magic {magic:#x} is not one of Go 1.16-1.27")
    version, w_nfunc, w_text, w_names, w_functab = layout

    def word(i: int) -> int:
        off = 8 + i * ptrsize
        if off + 8 > len(buf):
            raise BinaryError(".gopclntab header truncated")
        return _U64.unpack_from(buf, off)[0]

    nfunc = word(w_nfunc)
    if w_text is not None and word(w_text):
        text_start = word(w_text)
    names_off = word(w_names)
    functab_off = word(w_functab)
    # functab: nfunc pairs of (entryoff, funcoff) uint32 and a final end offset.
    if functab_off + (2 * nfunc + 1) * 4 > len(buf) or names_off > len(buf):
        raise BinaryError(f".gopclntab truncated: {nfunc} functions do not fit in {len(buf)} bytes")
    pairs = struct.unpack_from(f"<{2 * nfunc + 1}I", buf, functab_off)
    funcs = []
    for i in range(nfunc):
        entry_off, func_off = pairs[2 * i], pairs[2 * i + 1]
        end_off = pairs[2 * i + 2]
        rec = functab_off + func_off
        if rec + 8 > len(buf):
            raise BinaryError(f".gopclntab: function record {i} at {rec} is outside the table")
        name_off = _I32.unpack_from(buf, rec + 4)[0]
        start = names_off + name_off
        if not 0 <= start < len(buf):
            raise BinaryError(f".gopclntab: function {i} name offset {name_off} is outside the table")
        stop = buf.find(b"\0", start)
        name = buf[start : stop if stop >= 0 else len(buf)].decode("utf-8", "replace")
        funcs.append(PcFunc(name, text_start + entry_off, text_start + end_off))
    return version, funcs
