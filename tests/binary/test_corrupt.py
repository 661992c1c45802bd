"""Corrupted DWARF and ELF bytes must give BinaryError (one line from the CLI),
never another exception.  Deterministic: fixed seeds over a binary built with
uncompressed DWARF so that the flipped bytes reach the parsers directly."""

from __future__ import annotations

import random

import pytest

from goblueprint.binary.disasm import disassemble
from goblueprint.binary.dwarf import Dwarf
from goblueprint.binary.elf import Binary
from goblueprint.binary.layout import layout
from goblueprint.binary.symbols import Symbols
from goblueprint.errors import BinaryError

pytestmark = pytest.mark.slow


def exercise(data: bytes) -> None:
    b = Binary(data, "corrupt")
    syms = Symbols(b, key=None)
    dw = Dwarf(b)
    layout(dw, "runtime.g", expand=True)
    dw.consts  # noqa: B018 - building the index is the point
    disassemble(b, syms, dw, "runtime.schedule")


@pytest.mark.parametrize("section", [".debug_info", ".debug_abbrev", ".debug_line", ".symtab", ".gopclntab"])
def test_flipped_bytes_raise_only_binary_error(go_binary, monkeypatch, section):
    monkeypatch.setenv("GOBLUEPRINT_NO_CACHE", "1")
    clean = go_binary("hello", ldflags="-compressdwarf=false").read_bytes()
    sec = Binary(clean, "clean").section(section)
    assert sec is not None and sec.size > 0
    rng = random.Random(f"goblueprint-{section}")
    outcomes = {"ok": 0, "error": 0}
    for _ in range(3):
        data = bytearray(clean)
        for _ in range(8):
            pos = sec.offset + rng.randrange(min(sec.size, 4096))
            data[pos] = rng.randrange(256)
        try:
            exercise(bytes(data))
            outcomes["ok"] += 1
        except BinaryError as exc:
            assert "\n" not in str(exc)
            outcomes["error"] += 1
    assert sum(outcomes.values()) == 3


def test_uncompressed_dwarf_reads_like_compressed(go_binary):
    plain = Binary(go_binary("hello", ldflags="-compressdwarf=false").read_bytes(), "plain")
    packed = Binary(go_binary("hello").read_bytes(), "packed")
    assert plain.section(".debug_info").flags & 0x800 == 0
    assert packed.section(".debug_info").flags & 0x800, "SHF_COMPRESSED"
    a, b = Dwarf(plain), Dwarf(packed)
    assert layout(a, "runtime.g", expand=True) == layout(b, "runtime.g", expand=True)
    assert a.consts == b.consts
