"""Reader of Go's ``.gopclntab``: function names and entry ranges.

This is what a stripped binary (``-ldflags=-s -w``) still carries.  Facts come
from Go's ``debug/gosym/pclntab.go`` and ``internal/abi/symtab.go``: the layout
is the same from Go 1.18 to 1.27 except for the magic (1.18-1.19: 0xfffffff0,
1.20+: 0xfffffff1); 1.16-1.17 lack the text-start word and store absolute-PC
fields the same way.  Of the pc-value tables only a function's file and line
tables are read (``read_lines``): what Go's tracebacks and ``go tool objdump``
show, and all a stripped binary has of its source lines.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from goblueprint.errors import BinaryError

if TYPE_CHECKING:
    from goblueprint.binary.elf import Binary

SHF_ALLOC = 0x2

# magic -> (version name, header word index of: nfunc, textStart or None, funcnametab, functab)
_LAYOUTS = {
    0xFFFFFFF1: ("go1.20", 0, 2, 3, 7),
    0xFFFFFFF0: ("go1.18", 0, 2, 3, 7),
    0xFFFFFFFA: ("go1.16", 0, None, 2, 6),
}
# magic -> header word index of cutab, filetab and pctab (runtime.pcHeader), and the byte
# offset of pcfile in a _func record (1.16-1.17: an 8-byte entry PC, then as in 1.18+).
_LINE_LAYOUTS = {
    0xFFFFFFF1: (4, 5, 6, 20),
    0xFFFFFFF0: (4, 5, 6, 20),
    0xFFFFFFFA: (3, 4, 5, 24),
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


# runtime.moduledata (Go 1.18-1.27): the pcHeader pointer, six slices (3 words each),
# findfunctab, minpc, maxpc, then text and etext.
_MODULEDATA_TEXT_WORD = 22


def text_base(binary: Binary) -> int:
    """The address function entries of .gopclntab count from: runtime.text.

    The symbol when .symtab is there (as Go's objdump takes it).  A stripped binary
    has the address in runtime.firstmoduledata, found as the data word that points at
    .gopclntab followed by the pointer to its name table; an externally linked one
    (cgo) puts C code before runtime.text, so .text's start is only the last resort.
    """
    for sym in binary.symbols:
        if sym.name == "runtime.text":
            return sym.addr
    text, table = binary.section(".text"), binary.section(".gopclntab")
    if text is None:
        raise BinaryError(f"{binary.path}: no .text section")
    if table is None or not table.in_file or table.size < 8 + 8 * 8:
        return text.addr
    header = bytes(binary.section_bytes(".gopclntab")[: 8 + 8 * 8])
    layout = _LAYOUTS.get(_U32.unpack_from(header, 0)[0])
    if layout is None:
        return text.addr
    names_at = table.addr + _U64.unpack_from(header, 8 + layout[3] * 8)[0]
    needle = _U64.pack(table.addr) + _U64.pack(names_at)
    # In .noptrdata, or a section of its own (.go.module in Go 1.27's external links).
    for sec in binary.sections:
        if not sec.in_file or not sec.flags & SHF_ALLOC or sec.name in (".text", ".gopclntab"):
            continue
        data = bytes(binary.section_bytes(sec.name))
        at = data.find(needle)
        while at >= 0:
            end = at + (_MODULEDATA_TEXT_WORD + 2) * 8
            if at % 8 == 0 and end <= len(data):
                start, stop = struct.unpack_from("<2Q", data, at + _MODULEDATA_TEXT_WORD * 8)
                if text.addr <= start < stop <= text.addr + text.size:
                    return start
            at = data.find(needle, at + 1)
    return text.addr


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


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise BinaryError(".gopclntab: a pc-value table runs past the end")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _pcvalue(buf: bytes, pos: int, entry: int, end: int, quantum: int) -> list[tuple[int, int]]:
    """(pc, value) where each value starts, as runtime.step decodes the table (from value -1)."""
    out: list[tuple[int, int]] = []
    pc, value, first = entry, -1, True
    while pc < end:
        uvdelta, pos = _varint(buf, pos)
        if uvdelta == 0 and not first:
            break
        first = False
        value += -(uvdelta & 1) ^ (uvdelta >> 1)
        pcdelta, pos = _varint(buf, pos)
        out.append((pc, value))
        pc += pcdelta * quantum
    return out


def read_lines(data: bytes | memoryview, text_start: int, func: PcFunc) -> list[tuple[int, str, int]]:
    """(address, file, line) rows of FUNC from its pcfile and pcln tables, each row holding
    until the next; a row whose file is unknown (no entry in the table) gets file ""."""
    buf = bytes(data) if isinstance(data, memoryview) else data
    magic, _p1, _p2, quantum, ptrsize = _HEAD.unpack_from(buf, 0)
    layout, lines_layout = _LAYOUTS.get(magic), _LINE_LAYOUTS.get(magic)
    if layout is None or lines_layout is None or ptrsize != 8:
        raise BinaryError(f".gopclntab magic {magic:#x} is not one of Go 1.16-1.27")
    _v, w_nfunc, w_text, _w_names, w_functab = layout
    w_cutab, w_filetab, w_pctab, pcfile_at = lines_layout
    words = struct.unpack_from(f"<{w_functab + 1}Q", buf, 8)
    if w_text is not None and words[w_text]:
        text_start = words[w_text]
    nfunc, functab = words[w_nfunc], words[w_functab]
    pairs = struct.unpack_from(f"<{2 * nfunc + 1}I", buf, functab)
    # The functab is sorted by entry: find FUNC's record by its entry offset.
    lo, hi, want = 0, nfunc, func.entry - text_start
    while lo < hi:
        mid = (lo + hi) // 2
        if pairs[2 * mid] < want:
            lo = mid + 1
        else:
            hi = mid
    if lo == nfunc or pairs[2 * lo] != want:
        return []
    rec = functab + pairs[2 * lo + 1]
    if rec + pcfile_at + 16 > len(buf):
        raise BinaryError(f".gopclntab: the record of {func.name} is outside the table")
    pcfile, pcln, _npcdata, cu_offset = struct.unpack_from("<4I", buf, rec + pcfile_at)
    if pcfile == 0 or pcln == 0:
        return []  # no tables: an assembly stub without line information
    pctab, cutab, filetab = words[w_pctab], words[w_cutab], words[w_filetab]
    files = _pcvalue(buf, pctab + pcfile, func.entry, func.end, quantum)
    lines = _pcvalue(buf, pctab + pcln, func.entry, func.end, quantum)
    names: dict[int, str] = {}

    def file_name(fno: int) -> str:
        if fno not in names:
            at = cutab + (cu_offset + fno) * 4
            off = _U32.unpack_from(buf, at)[0] if fno >= 0 and at + 4 <= len(buf) else 0xFFFFFFFF
            if off == 0xFFFFFFFF or filetab + off >= len(buf):
                names[fno] = ""
            else:
                start = filetab + off
                stop = buf.find(b"\0", start)
                names[fno] = buf[start : stop if stop >= 0 else len(buf)].decode("utf-8", "replace")
        return names[fno]

    # Merge the two tables' change points into rows of (address, file, line).
    rows: list[tuple[int, str, int]] = []
    fi = li = 0
    for pc in sorted({pc for pc, _ in files} | {pc for pc, _ in lines}):
        while fi + 1 < len(files) and files[fi + 1][0] <= pc:
            fi += 1
        while li + 1 < len(lines) and lines[li + 1][0] <= pc:
            li += 1
        fname = file_name(files[fi][1]) if files and files[fi][0] <= pc else ""
        line = lines[li][1] if lines and lines[li][0] <= pc else 0
        row = (pc, fname, line)
        if not rows or rows[-1][1:] != row[1:]:
            rows.append(row)
    return rows
