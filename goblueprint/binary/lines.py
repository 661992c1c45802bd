"""A fast DWARF line-number program decoder (DWARF 2-5 opcodes).

Works on the program bytes with an integer position: no per-byte slicing and
no objects per row.  Yields (address, file index, line, end_sequence) rows.
"""

from __future__ import annotations

import struct

from goblueprint.errors import BinaryError

_U16 = struct.Struct("<H")
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")

# Standard opcodes (DWARF 5, section 6.2.5.2).
DW_LNS_copy, DW_LNS_advance_pc, DW_LNS_advance_line, DW_LNS_set_file = 1, 2, 3, 4
DW_LNS_const_add_pc, DW_LNS_fixed_advance_pc = 8, 9
DW_LNE_end_sequence, DW_LNE_set_address = 1, 2


def decode_program(
    prog: bytes,
    *,
    min_inst: int,
    line_base: int,
    line_range: int,
    opcode_base: int,
    std_lengths: list[int],
    first_file: int,
) -> list[tuple[int, int, int, bool]]:
    if line_range == 0:
        raise BinaryError("line program header has line_range 0")
    n = len(prog)
    pos = 0
    rows: list[tuple[int, int, int, bool]] = []
    addr, file, line = 0, first_file, 1
    const_add = ((255 - opcode_base) // line_range) * min_inst

    def uleb(p: int) -> tuple[int, int]:
        result = shift = 0
        while True:
            if p >= n:
                raise BinaryError("line program truncated inside a LEB128")
            b = prog[p]
            p += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return result, p

    def sleb(p: int) -> tuple[int, int]:
        value, end = uleb(p)
        bits = 7 * (end - p)
        # The sign is the top bit of the last 7-bit group.
        return (value - (1 << bits) if value & (1 << (bits - 1)) else value), end

    while pos < n:
        op = prog[pos]
        pos += 1
        if op >= opcode_base:
            adj = op - opcode_base
            addr += (adj // line_range) * min_inst
            line += line_base + adj % line_range
            rows.append((addr, file, line, False))
        elif op == 0:
            length, pos = uleb(pos)
            if length == 0 or pos + length > n:
                raise BinaryError("line program extended opcode runs past its end")
            sub = prog[pos]
            if sub == DW_LNE_end_sequence:
                rows.append((addr, file, line, True))
                addr, file, line = 0, first_file, 1
            elif sub == DW_LNE_set_address:
                if length == 9:
                    addr = _U64.unpack_from(prog, pos + 1)[0]
                elif length == 5:
                    addr = _U32.unpack_from(prog, pos + 1)[0]
            pos += length
        elif op == DW_LNS_copy:
            rows.append((addr, file, line, False))
        elif op == DW_LNS_advance_pc:
            v, pos = uleb(pos)
            addr += v * min_inst
        elif op == DW_LNS_advance_line:
            delta, pos = sleb(pos)
            line += delta
        elif op == DW_LNS_set_file:
            file, pos = uleb(pos)
        elif op == DW_LNS_const_add_pc:
            addr += const_add
        elif op == DW_LNS_fixed_advance_pc:
            if pos + 2 > n:
                raise BinaryError("line program truncated")
            addr += _U16.unpack_from(prog, pos)[0]
            pos += 2
        else:
            # Any other standard opcode: skip its ULEB operands (set_column, set_isa, ...).
            count = std_lengths[op - 1] if op - 1 < len(std_lengths) else 0
            for _ in range(count):
                _, pos = uleb(pos)
    return rows
