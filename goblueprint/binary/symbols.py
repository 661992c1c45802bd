"""The symbol view of a binary: .symtab when present, else .gopclntab.

A stripped Go binary (``-ldflags=-s``) loses .symtab and DWARF but keeps
.gopclntab, so functions (names and address ranges) are still known.
"""

from __future__ import annotations

import bisect
import difflib
from dataclasses import dataclass
from typing import Any

from goblueprint.binary import cache
from goblueprint.binary.elf import Binary
from goblueprint.binary.pclntab import read_functions, text_base
from goblueprint.errors import BinaryError


@dataclass(frozen=True)
class Func:
    name: str
    lo: int
    hi: int


class Symbols:
    def __init__(self, binary: Binary, key: str | None = None) -> None:
        self.binary = binary
        self.key = key or cache.key_of(binary.data)
        got = cache.get(self.key, "symbols", lambda: {"symbols": self._build()})
        self.source: str = got["source"]
        self.rows: list[dict[str, Any]] = got["rows"]
        funcs = [
            Func(r["name"], r["address"], r["address"] + r["size"]) for r in self.rows if r["kind"] == "func"
        ]
        funcs.sort(key=lambda f: (f.lo, -f.hi))
        self.funcs = funcs
        self._starts = [f.lo for f in funcs]
        objs = [Func(r["name"], r["address"], r["address"] + r["size"]) for r in self.rows
                if r["kind"] == "object" and r["size"] > 0]  # fmt: skip
        objs.sort(key=lambda f: (f.lo, -f.hi))
        self.objects = objs
        self._obj_starts = [f.lo for f in objs]
        self._by_name: dict[str, Func] = {}
        for f in funcs:
            # ABI0 and ABIInternal copies share a name; keep the larger body.
            old = self._by_name.get(f.name)
            if old is None or f.hi - f.lo > old.hi - old.lo:
                self._by_name[f.name] = f

    def _build(self) -> dict[str, Any]:
        b = self.binary
        if b.has_symtab:
            rows = [{"name": s.name, "address": s.addr, "size": s.size, "kind": s.kind, "bind": s.bind,
                     "section": s.section} for s in b.symbols]  # fmt: skip
            return {"source": "symtab", "rows": rows}
        text = b.section(".text")
        if b.section(".gopclntab") is None or text is None:
            raise BinaryError(f"{b.path}: no symbol table and no .gopclntab: not a Go binary?")
        _version, funcs = read_functions(b.section_bytes(".gopclntab"), text_base(b))
        rows = [{"name": f.name, "address": f.entry, "size": f.end - f.entry, "kind": "func", "bind": "",
                 "section": ".text"} for f in funcs]  # fmt: skip
        return {"source": "gopclntab", "rows": rows}

    def function(self, name: str) -> Func:
        f = self._by_name.get(name)
        if f is not None:
            return f
        # "schedule" for runtime.schedule: a package-less name is far from the full one by
        # edit ratio, so names ending in ".NAME" come first.
        # A generic function's instances carry their shapes (main.Sum[go.shape.int64]).
        suffix = "." + name
        close = sorted(
            n for n in self._by_name if (base := n.split("[", 1)[0]) == name or base.endswith(suffix)
        )[:3]
        if not close:
            close = difflib.get_close_matches(name, list(self._by_name), n=3, cutoff=0.8)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise BinaryError(f"no function {name!r} in {self.binary.path}{hint}")

    def at(self, addr: int) -> tuple[Func, int] | None:
        """The function containing ADDR and the offset into it."""
        i = bisect.bisect_right(self._starts, addr) - 1
        marker = None
        while i >= 0:
            f = self.funcs[i]
            if f.lo <= addr < f.hi:
                return f, addr - f.lo
            if f.lo == f.hi == addr and marker is None:
                # A zero-size label (runtime.text, go:textfipsstart) shares its address with
                # the function laid out there, which is what a call to that address reaches.
                marker = f
            if f.lo < addr - (1 << 20):
                break
            i -= 1
        return (marker, 0) if marker is not None else None

    def describe_data(self, addr: int) -> str | None:
        """name+offset of the data symbol holding ADDR (for RIP-relative operands)."""
        i = bisect.bisect_right(self._obj_starts, addr) - 1
        if i >= 0:
            obj = self.objects[i]
            if obj.lo <= addr < obj.hi:
                return obj.name if addr == obj.lo else f"{obj.name}+{addr - obj.lo:#x}"
        return None

    def describe(self, addr: int) -> str | None:
        hit = self.at(addr)
        if hit is None:
            return None
        f, off = hit
        return f.name if off == 0 else f"{f.name}+{off:#x}"
