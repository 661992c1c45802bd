"""Opening a binary for the CLI: the ELF, its symbols and (if present) DWARF."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from goblueprint.binary import cache
from goblueprint.binary.dwarf import Dwarf
from goblueprint.binary.elf import Binary, open_binary
from goblueprint.binary.symbols import Symbols
from goblueprint.errors import BinaryError


@dataclass
class Opened:
    binary: Binary
    symbols: Symbols
    dwarf: Dwarf | None


def open_all(path: str, *, need_dwarf: bool = False, warn: bool = True) -> Opened:
    b = open_binary(path)
    key = cache.key_of(b.data)
    syms = Symbols(b, key)
    if not b.has_dwarf:
        msg = (f"{path}: no DWARF debug info (built with -ldflags=-w or -s); "
               f"using function names and ranges from {syms.source}")  # fmt: skip
        if need_dwarf:
            raise BinaryError(msg.replace("; using", "; only").replace(" from ", " are available from "))
        if warn:
            print(f"goblueprint: note: {msg}", file=sys.stderr)
        return Opened(b, syms, None)
    return Opened(b, syms, Dwarf(b, key))
