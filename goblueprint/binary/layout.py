"""Struct layouts from DWARF: fields, offsets, sizes, nested paths and holes."""

from __future__ import annotations

import difflib
from typing import Any

from goblueprint.binary.dwarf import Dwarf
from goblueprint.errors import BinaryError

# Go composite types DWARF describes as structs but that read better unexpanded.
_OPAQUE_PREFIXES = ("[]", "string", "map[", "chan ", "interface", "func(", "runtime.iface", "runtime.eface")


def find_type(dw: Dwarf, name: str) -> tuple[str, list]:
    """The DIE offset and record of a type named NAME (or runtime.NAME)."""
    names = dw.type_names
    for candidate in (name, f"runtime.{name}"):
        off = names.get(candidate)
        if off is not None:
            return off, dw.types[off]
    # "Pair" for main.Pair[int,float64] or sync.Mutex for "Mutex": a name without its package
    # (or its type arguments) is far from the full one by edit ratio, so those come first.
    close = sorted(n for n in names if _named(n) and n.split("[", 1)[0].endswith("." + name))[:3]
    if not close:
        close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.75)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise BinaryError(f"unknown type {name!r} in {dw.binary.path}{hint}")


def _named(type_name: str) -> bool:
    """A defined type's name (pkg.T or pkg.T[args]), not a pointer, slice, channel, map,
    func or a runtime-internal <...> instance."""
    return not type_name.startswith(("*", "[", "chan ", "map[", "func(")) and "<" not in type_name


def _resolve(dw: Dwarf, off: str | None, seen: int = 0) -> list | None:
    """Follow typedefs to the underlying type record."""
    rec = dw.types.get(str(off)) if off is not None else None
    while rec is not None and rec[0] == "typedef" and seen < 64:
        rec = dw.types.get(str(rec[3])) if rec[3] is not None else None
        seen += 1
    return rec


def type_size(dw: Dwarf, off: str | int | None, ptr_size: int = 8) -> int | None:
    rec = dw.types.get(str(off)) if off is not None else None
    for _ in range(64):
        if rec is None:
            return None
        kind, _name, size, target, extra = rec
        if size is not None:
            return size
        if kind == "pointer":
            return ptr_size
        if kind == "array" and extra is not None:
            elem = type_size(dw, target, ptr_size)
            return None if elem is None else elem * extra
        if kind == "typedef" and target is not None:
            rec = dw.types.get(str(target))
            continue
        return None
    return None


def _type_name(dw: Dwarf, off: Any) -> str:
    rec = dw.types.get(str(off)) if off is not None else None
    if rec is None:
        return "?"
    if rec[1]:
        return rec[1]
    if rec[0] == "pointer":
        return "*" + _type_name(dw, rec[3])
    return rec[0]


def layout(dw: Dwarf, name: str, *, expand: bool = False) -> dict[str, Any]:
    """The layout record of a type: size, fields (paths when expanded) and holes."""
    off, rec = find_type(dw, name)
    real = _resolve(dw, off)
    if real is None:
        raise BinaryError(f"type {rec[1]!r} has no definition in the DWARF of {dw.binary.path}")
    fields: list[dict[str, Any]] = []
    holes: list[dict[str, Any]] = []
    size = type_size(dw, off)
    if real[0] in ("struct", "union"):
        _walk(dw, real, "", 0, 0, expand, fields, holes)
    return {"type": rec[1], "kind": real[0], "size": size, "fields": fields, "holes": holes}


def _walk(dw: Dwarf, rec: list, prefix: str, base: int, depth: int, expand: bool,
          fields: list[dict[str, Any]], holes: list[dict[str, Any]]) -> None:  # fmt: skip
    members = rec[4] or []
    end = 0
    for i, (mname, moff, mtype) in enumerate(members):
        msize = type_size(dw, mtype)
        path = f"{prefix}{mname}"
        if moff > end and i > 0:
            holes.append({"offset": base + end, "size": moff - end, "after": f"{prefix}{members[i - 1][0]}"})
        fields.append({"name": path, "offset": base + moff, "size": msize, "type": _type_name(dw, mtype),
                       "depth": depth})  # fmt: skip
        if msize is not None:
            end = max(end, moff + msize)
        if expand:
            sub = _resolve(dw, mtype)
            tname = _type_name(dw, mtype)
            if (
                sub is not None
                and sub[0] == "struct"
                and not tname.startswith(_OPAQUE_PREFIXES)
                and depth < 16
            ):
                _walk(dw, sub, f"{path}.", base + moff, depth + 1, expand, fields, holes)
    total = rec[2]
    if members and total is not None and total > end:
        holes.append({"offset": base + end, "size": total - end, "after": f"{prefix}{members[-1][0]}"})
