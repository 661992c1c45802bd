"""DWARF of a Go binary as plain, cacheable indexes.

One pass over every DIE (our walker in ``die.py``; pyelftools supplies the
sections, decompressing SHF_COMPRESSED ones, and line-program headers) yields
the indexes, each cached as JSON per binary:

* ``types``: DIE offset -> [kind, name, byte size, element/target offset, extra]
  where extra is the member list of a struct ([name, offset, type DIE]) or the
  element count of an array; ``typenames``: name -> DIE offset;
* ``consts``: DW_TAG_constant name -> [value, type name];
* ``funcdir``: subprogram name -> [low, high, CU offset]; ``inlines-<cu>``:
  subprogram name -> inlined subroutines as [callee, [[lo, hi], ...], call
  file, call line, depth]; ``cus``: CU offset -> address ranges.

Line tables are decoded by our own state machine (pyelftools' is ~10x slower on
the runtime's 100k-entry program) per compilation unit, on demand, and cached.
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

from goblueprint.binary import cache
from goblueprint.binary.elf import Binary
from goblueprint.errors import BinaryError

# Errors pyelftools raises on malformed DWARF, turned into BinaryError at this boundary.
try:
    from elftools.common.exceptions import DWARFError, ELFError, ELFParseError
    from elftools.construct.core import ConstructError

    _PYELF_ERRORS: tuple[type[BaseException], ...] = (DWARFError, ELFError, ELFParseError, ConstructError)
except ImportError:  # pragma: no cover - pyelftools is a dependency
    _PYELF_ERRORS = ()
_PARSE_ERRORS = (*_PYELF_ERRORS, ValueError, KeyError, IndexError, EOFError, UnicodeDecodeError, struct.error,
                 zlib.error, OverflowError)  # fmt: skip


def _s(value: Any) -> str:
    """A name attribute, or "" when corrupt input gave it another form."""
    return value if isinstance(value, str) else ""


def _i(value: Any) -> int | None:
    """An integer attribute, or None when corrupt input gave it another form."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class Dwarf:
    """Lazily built DWARF indexes of one binary."""

    def __init__(self, binary: Binary, key: str | None = None) -> None:
        if not binary.has_dwarf:
            raise BinaryError(
                f"{binary.path}: no DWARF debug info (built with -ldflags=-w or -s); "
                "only symbols and .gopclntab function ranges are available"
            )
        self.binary = binary
        self.key = key or cache.key_of(binary.data)
        self._info: Any = None
        self._indexes: dict[str, Any] = {}

    # -- pyelftools access ------------------------------------------------------

    @property
    def info(self) -> Any:
        if self._info is None:
            from elftools.elf.elffile import ELFFile

            try:
                self._info = ELFFile(io.BytesIO(self.binary.data)).get_dwarf_info()
            except _PARSE_ERRORS as exc:
                raise BinaryError(f"{self.binary.path}: unreadable DWARF: {exc}") from exc
        return self._info

    # -- indexes ------------------------------------------------------------------

    def _build_parts(self) -> dict[str, Any]:
        """Every index part of one DWARF pass, also kept in memory for this process."""
        try:
            built = _split(self._build())
        except _PARSE_ERRORS as exc:
            raise BinaryError(f"{self.binary.path}: malformed DWARF: {exc}") from exc
        self._indexes.update(built)
        return built

    def index(self, part: str) -> Any:
        if part not in self._indexes:
            got = cache.get(self.key, part, self._build_parts, group="dwarf-index")
            # A unit without functions has no inline part: nothing to load.
            self._indexes[part] = {} if got is None else got
        return self._indexes[part]

    @property
    def types(self) -> dict[str, list]:
        return self.index("types")

    @property
    def type_names(self) -> dict[str, str]:
        return self.index("typenames")

    @property
    def consts(self) -> dict[str, list]:
        return self.index("consts")

    @property
    def funcs(self) -> dict[str, list]:
        """name -> [low, high, CU offset] of every subprogram with code."""
        return self.index("funcdir")

    def _file_table(self, cu: Any) -> list[str]:
        lp = self.info.line_program_for_CU(cu)
        if lp is None:
            return []
        version = lp.header["version"]
        dirs = [_str(d) for d in lp.header.get("include_directory", [])]
        comp_dir = "."
        files = []
        for entry in lp.header.get("file_entry", []):
            name = _str(entry.name) if entry.get("name") is not None else "?"
            di = entry.get("dir_index")
            if not isinstance(di, int):
                # Corrupt header or a DWARF 5 format without a directory: no directory.
                di = 0
            if version >= 5:
                d = dirs[di] if di < len(dirs) else ""
            else:
                d = comp_dir if di == 0 else (dirs[di - 1] if di - 1 < len(dirs) else "")
            files.append(name if name.startswith("/") or not d or d == "." else f"{d}/{name}")
        # DWARF 5 indexes files from 0, DWARF 4 from 1: pad so index == position.
        return files if version >= 5 else ["", *files]

    def _build(self) -> dict[str, Any]:
        from goblueprint.binary import die as D

        info = self.info
        sections = {}
        for key, attr in (("info", "debug_info_sec"), ("abbrev", "debug_abbrev_sec"), ("str", "debug_str_sec"),
                          ("line_str", "debug_line_str_sec"), ("addr", "debug_addr_sec"),
                          ("ranges", "debug_ranges_sec"), ("rnglists", "debug_rnglists_sec")):  # fmt: skip
            sec = getattr(info, attr, None)
            if sec is not None:
                sections[key] = sec.stream.getvalue()
        reader = D.DieReader(sections)
        types: dict[str, list] = {}
        type_names: dict[str, str] = {}
        consts: dict[str, list] = {}
        funcs: dict[str, list] = {}
        sub_names: dict[int, str] = {}
        pending_inlines: list[tuple[list, int]] = []
        cus: dict[str, list] = {}
        type_tags = D.TYPE_TAGS
        for unit in reader.units():
            cu_off = unit.offset
            cu_base = 0
            files: list[str] | None = None
            depth = 0
            current: list | None = None
            current_depth = -1
            inline_depth_base = 0
            array: list | None = None
            struct_rec: list | None = None
            for item in reader.dies(unit, D.SKIPPED_TAGS):
                if item is None:
                    depth -= 1
                    if current is not None and depth <= current_depth:
                        current = None
                    continue
                off, tag, attrs, children = item
                kind = type_tags.get(tag)
                if kind is not None:
                    name = _s(attrs.get(D.AT_NAME))
                    rec = [kind, name, _i(attrs.get(D.AT_BYTE_SIZE)), _i(attrs.get(D.AT_TYPE)), None]
                    types[str(off)] = rec
                    if name and (name not in type_names or kind != "typedef"):
                        type_names[name] = str(off)
                    struct_rec = rec if kind in ("struct", "union") else None
                    array = rec if kind == "array" else None
                    if struct_rec is not None:
                        rec[4] = []
                elif tag == D.TAG_MEMBER and struct_rec is not None:
                    loc = attrs.get(D.AT_MEMBER_LOCATION, 0)
                    if isinstance(loc, bytes):
                        # An expression: Go only ever writes DW_OP_plus_uconst N.
                        loc = D._uleb(loc, 1)[0] if loc[:1] == b"\x23" and len(loc) > 1 else 0
                    struct_rec[4].append([_s(attrs.get(D.AT_NAME)), _i(loc) or 0, _i(attrs.get(D.AT_TYPE))])
                elif tag == D.TAG_SUBRANGE and array is not None:
                    if _i(attrs.get(D.AT_COUNT)) is not None:
                        array[4] = attrs[D.AT_COUNT]
                    elif _i(attrs.get(D.AT_UPPER_BOUND)) is not None:
                        array[4] = attrs[D.AT_UPPER_BOUND] + 1
                elif tag == D.TAG_CONSTANT:
                    name = _s(attrs.get(D.AT_NAME))
                    val = _i(attrs.get(D.AT_CONST_VALUE))
                    if name and val is not None:
                        consts[name] = [val, _i(attrs.get(D.AT_TYPE))]
                elif tag == D.TAG_SUBPROGRAM:
                    name = _s(attrs.get(D.AT_NAME))
                    sub_names[off] = name
                    ranges = reader.pc_ranges(unit, attrs, cu_base)
                    if ranges and name:
                        current = [ranges[0][0], ranges[0][1], cu_off, []]
                        funcs.setdefault(name, current)
                        current_depth = depth
                        inline_depth_base = depth + 1
                elif tag == D.TAG_INLINED and current is not None:
                    if files is None:
                        files = self._file_table(info.get_CU_at(cu_off))
                    origin = _i(attrs.get(D.AT_ABSTRACT_ORIGIN))
                    cf = _i(attrs.get(D.AT_CALL_FILE)) or 0
                    rec = [origin, reader.pc_ranges(unit, attrs, cu_base), files[cf] if cf < len(files) else "?",
                           _i(attrs.get(D.AT_CALL_LINE)) or 0, depth - inline_depth_base]  # fmt: skip
                    current[3].append(rec)
                    pending_inlines.append((rec, origin))
                elif tag == D.TAG_COMPILE_UNIT:
                    if D.AT_LOW_PC in attrs:
                        cu_base = reader.address(unit, attrs[D.AT_LOW_PC])
                    cus[str(cu_off)] = reader.pc_ranges(unit, attrs, cu_base)
                if children:
                    depth += 1
        for rec, origin in pending_inlines:
            rec[0] = sub_names.get(origin, "?") if origin is not None else "?"
        for name, (val, tref) in list(consts.items()):
            t = types.get(str(tref)) if tref is not None else None
            consts[name] = [val, t[1] if t else ""]
        return {"types": types, "typenames": type_names, "consts": consts, "funcs": funcs, "cus": cus}

    # -- line table -----------------------------------------------------------------

    def function(self, name: str) -> list | None:
        """The subprogram record of a symbol name (ABI0 wrappers are named without .abi0 in DWARF)."""
        rec = self.funcs.get(name) or self.funcs.get(name.removesuffix(".abi0"))
        if rec is None:
            return None
        inlines = self.index(f"inlines-{rec[2]}")
        return [*rec[:3], inlines.get(name) or inlines.get(name.removesuffix(".abi0")) or []]

    def cu_of(self, addr: int) -> int | None:
        for off, ranges in self.index("cus").items():
            if any(lo <= addr < hi for lo, hi in ranges):
                return int(off)
        return None

    def _line_columns(self, cu_offset: int) -> dict[str, list]:
        """One CU's line table as columns (addr, file index, line) plus its file names.

        Cached in this shape: ints load ~5x faster than rows, and a function's
        slice can be cut by bisect before any row is built.
        """
        part = f"lines-{cu_offset}"
        cols = self._indexes.get(part)
        if cols is not None:
            return cols

        def build() -> dict[str, Any]:
            try:
                rows = self._decode_lines(cu_offset)
            except _PARSE_ERRORS as exc:
                raise BinaryError(f"{self.binary.path}: malformed line table: {exc}") from exc
            files_idx: dict[str, int] = {}
            return {
                part: {
                    "addr": [r[0] for r in rows],
                    "file": [files_idx.setdefault(r[1], len(files_idx)) for r in rows],
                    "line": [r[2] for r in rows],
                    "files": list(files_idx),
                }
            }

        cols = cache.get(self.key, part, build)
        self._indexes[part] = cols
        return cols

    def lines(self, cu_offset: int) -> list[list]:
        """Rows [address, file, line] of one CU's line program, address-sorted.

        A row with line 0 and file "" marks the end of a sequence.
        """
        cols = self._line_columns(cu_offset)
        files = cols["files"]
        return [[a, files[f], ln] for a, f, ln in zip(cols["addr"], cols["file"], cols["line"], strict=True)]

    def lines_in(self, cu_offset: int, lo: int, hi: int) -> list[list]:
        """The rows covering [lo, hi): the row in force at lo, then every row before hi."""
        import bisect

        cols = self._line_columns(cu_offset)
        addrs, files, fidx, lines = cols["addr"], cols["files"], cols["file"], cols["line"]
        first = max(bisect.bisect_right(addrs, lo) - 1, 0)
        last = bisect.bisect_left(addrs, hi)
        return [[addrs[i], files[fidx[i]], lines[i]] for i in range(first, last)]

    def _decode_lines(self, cu_offset: int) -> list[list]:
        from goblueprint.binary.lines import decode_program

        info = self.info
        cu = info.get_CU_at(cu_offset)
        lp = info.line_program_for_CU(cu)
        if lp is None:
            return []
        files = self._file_table(cu)
        stream = info.debug_line_sec.stream
        stream.seek(lp.program_start_offset)
        program = stream.read(lp.program_end_offset - lp.program_start_offset)
        h = lp.header
        raw = decode_program(
            program,
            min_inst=h["minimum_instruction_length"],
            line_base=h["line_base"],
            line_range=h["line_range"],
            opcode_base=h["opcode_base"],
            std_lengths=list(h["standard_opcode_lengths"]),
            # The file register starts at 1 in every DWARF version (DWARF 5 section 6.2.2);
            # Go's assembler CUs rely on it and never emit set_file.
            first_file=1,
        )
        out = []
        for addr, fidx, line, end in raw:
            if end:
                out.append([addr, "", 0])
            else:
                out.append([addr, files[fidx] if 0 <= fidx < len(files) else "?", line])
        # At a shared address the previous sequence ends before the next begins.
        out.sort(key=lambda r: (r[0], r[2] != 0))
        return out


def _split(built: dict[str, Any]) -> dict[str, Any]:
    """Cache parts: small directories plus per-CU inline lists, so that one
    function's disassembly loads only its own unit's data."""
    parts = {k: v for k, v in built.items() if k != "funcs"}
    parts["funcdir"] = {name: rec[:3] for name, rec in built["funcs"].items()}
    per_cu: dict[str, dict[str, list]] = {}
    for name, rec in built["funcs"].items():
        per_cu.setdefault(f"inlines-{rec[2]}", {})
        if rec[3]:
            per_cu[f"inlines-{rec[2]}"][name] = rec[3]
    parts.update(per_cu)
    return parts
