"""The ELF container of a Go binary: validation, sections, symbols, build info.

The header, section table and symbol table are read with precompiled structs
straight from the file's bytes (fast, and every bound is checked so truncated
files fail with one BinaryError).  pyelftools is used only for DWARF.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from goblueprint.errors import BinaryError, PathError

_IDENT = struct.Struct("<4sBBBBB7x")
_EHDR64 = struct.Struct("<16xHHIQQQIHHHHHH")
_SHDR64 = struct.Struct("<IIQQQQIIQQ")
_SYM64 = struct.Struct("<IBBHQQ")

SHT_NOBITS = 8
SHT_SYMTAB = 2
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4

# ELF machine numbers -> Go GOARCH names, for the architectures we disassemble.
MACHINES = {62: "amd64", 183: "arm64"}

_SYM_TYPES = {0: "notype", 1: "object", 2: "func", 3: "section", 4: "file", 6: "tls"}
_SYM_BINDS = {0: "local", 1: "global", 2: "weak"}

_BUILDINFO_MAGIC = b"\xff Go buildinf:"
_GO_VERSION = re.compile(r"go(\d+\.\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Section:
    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int

    @property
    def in_file(self) -> bool:
        return self.type != SHT_NOBITS


@dataclass(frozen=True)
class Symbol:
    name: str
    addr: int
    size: int
    kind: str  # func, object, notype, tls, ...
    bind: str
    section: str


class Binary:
    """A Go ELF binary held in memory (a few MB) with its parsed tables."""

    def __init__(self, data: bytes, path: str = "<bytes>") -> None:
        self.path = path
        self.data = data
        self._parse_headers()

    # -- headers -------------------------------------------------------------

    def _parse_headers(self) -> None:
        data = self.data
        name = self.path
        if len(data) < 4 or data[:4] != b"\x7fELF":
            raise BinaryError(f"{name}: not an ELF file")
        if len(data) < 64:
            raise BinaryError(f"{name}: truncated ELF file ({len(data)} bytes, header needs 64)")
        _magic, ei_class, ei_data, _ver, _abi, _abiver = _IDENT.unpack_from(data, 0)
        if ei_class != 2 or ei_data != 1:
            raise BinaryError(f"{name}: only 64-bit little-endian ELF is supported (amd64, arm64)")
        (_type, machine, _v, self.entry, _phoff, shoff, _flags, _ehsize, _phentsize, _phnum,
         shentsize, shnum, shstrndx) = _EHDR64.unpack_from(data, 0)  # fmt: skip
        if machine not in MACHINES:
            raise BinaryError(f"{name}: unsupported ELF machine {machine} (supported: amd64, arm64)")
        self.arch = MACHINES[machine]
        if shnum == 0 or shentsize != _SHDR64.size:
            raise BinaryError(f"{name}: ELF file without a section table")
        if shoff + shnum * shentsize > len(data):
            raise BinaryError(f"{name}: truncated ELF file (section table ends past byte {len(data)})")
        raw = [_SHDR64.unpack_from(data, shoff + i * shentsize) for i in range(shnum)]
        if shstrndx >= shnum:
            raise BinaryError(f"{name}: bad section name table index {shstrndx}")
        strtab = raw[shstrndx]
        sections = []
        for i, (nameoff, stype, flags, addr, offset, size, _link, _info, _align, _entsize) in enumerate(raw):
            if stype != SHT_NOBITS and offset + size > len(data):
                raise BinaryError(f"{name}: truncated ELF file (section {i} ends past byte {len(data)})")
            sname = self._cstr(strtab[4] + nameoff, strtab[4] + strtab[5])
            sections.append(Section(i, sname, stype, flags, addr, offset, size))
        self.sections = sections
        self._by_name = {s.name: s for s in sections}
        self._symtab_link = {i: r[6] for i, r in enumerate(raw)}

    def _cstr(self, start: int, limit: int) -> str:
        end = self.data.find(b"\0", start, limit)
        if end < 0:
            end = limit
        return self.data[start:end].decode("utf-8", "replace")

    def section(self, name: str) -> Section | None:
        return self._by_name.get(name)

    def section_bytes(self, name: str) -> memoryview:
        sec = self._by_name.get(name)
        if sec is None or not sec.in_file:
            raise BinaryError(f"{self.path}: no {name} section")
        return memoryview(self.data)[sec.offset : sec.offset + sec.size]

    def section_at(self, addr: int) -> Section | None:
        for sec in self.sections:
            if sec.flags & SHF_ALLOC and sec.addr <= addr < sec.addr + sec.size:
                return sec
        return None

    def read(self, addr: int, size: int) -> bytes:
        """Bytes of the loaded image at a virtual address (within one section)."""
        sec = self.section_at(addr)
        if sec is None or not sec.in_file or addr + size > sec.addr + sec.size:
            raise BinaryError(f"{self.path}: address {addr:#x}+{size} is not in a file-backed section")
        start = sec.offset + addr - sec.addr
        return self.data[start : start + size]

    # -- facts -----------------------------------------------------------------

    @property
    def has_dwarf(self) -> bool:
        return ".debug_info" in self._by_name or ".zdebug_info" in self._by_name

    @property
    def has_symtab(self) -> bool:
        sec = self._by_name.get(".symtab")
        return sec is not None and sec.size > 0

    @cached_property
    def go_version(self) -> str | None:
        """The Go release that built the binary ("1.27.3"), from .go.buildinfo."""
        sec = self._by_name.get(".go.buildinfo")
        if sec is not None and sec.in_file and sec.size >= 32:
            buf = self.data[sec.offset : sec.offset + min(sec.size, 4096)]
            if buf.startswith(_BUILDINFO_MAGIC) and buf[15] & 2:
                # Go >= 1.18: varint length then the version string at offset 32.
                length, pos, shift = 0, 32, 0
                while pos < len(buf):
                    b = buf[pos]
                    pos += 1
                    length |= (b & 0x7F) << shift
                    shift += 7
                    if not b & 0x80:
                        break
                text = buf[pos : pos + length].decode("utf-8", "replace")
                return text.removeprefix("go") or None
        # Older or unusual layouts: the runtime.buildVersion string header.
        for sym in self.symbols:
            if sym.name == "runtime.buildVersion" and sym.size == 16:
                try:
                    ptr, length = struct.unpack("<QQ", self.read(sym.addr, 16))
                    text = self.read(ptr, length).decode("utf-8", "replace")
                except BinaryError:
                    return None
                match = _GO_VERSION.match(text)
                return match.group(1) if match else None
        return None

    @cached_property
    def symbols(self) -> list[Symbol]:
        """Every named symbol of .symtab, in table order (empty when stripped)."""
        sec = self._by_name.get(".symtab")
        if sec is None or not sec.in_file or sec.size == 0:
            return []
        link = self._symtab_link[sec.index]
        if link >= len(self.sections):
            raise BinaryError(f"{self.path}: .symtab links to missing section {link}")
        strsec = self.sections[link]
        count = sec.size // _SYM64.size
        names = {s.index: s.name for s in self.sections}
        out = []
        view = memoryview(self.data)[sec.offset : sec.offset + count * _SYM64.size]
        str_lo, str_hi = strsec.offset, strsec.offset + strsec.size
        for nameoff, info, _other, shndx, value, size in _SYM64.iter_unpack(view):
            if nameoff == 0:
                continue
            if str_lo + nameoff >= str_hi:
                raise BinaryError(f"{self.path}: symbol name offset {nameoff} outside .strtab")
            name = self._cstr(str_lo + nameoff, str_hi)
            stype = _SYM_TYPES.get(info & 0xF, str(info & 0xF))
            bind = _SYM_BINDS.get(info >> 4, str(info >> 4))
            # Index 0 is the null section (no name): such a symbol is undefined, a libc
            # function a cgo binary imports.
            secname = "UND" if shndx == 0 else names.get(shndx, "ABS" if shndx == 0xFFF1 else str(shndx))
            out.append(Symbol(name, value, size, stype, bind, secname))
        return out


def open_binary(path: str | Path) -> Binary:
    """Read a binary from disk; a missing file or a non-ELF one raises BinaryError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise PathError.from_os(p, exc) from None
    return Binary(data, str(p))
