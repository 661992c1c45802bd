"""Plain-text renderers of the binary blueprints (formatting only)."""

from __future__ import annotations

import json
from typing import Any

from goblueprint.binary.disasm import short_path


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True)


def symbols(rows: list[dict[str, Any]], source: str) -> str:
    lines = [
        f"# {len(rows)} symbols from {source}",
        f"{'ADDRESS':>18} {'SIZE':>8} {'KIND':<7} {'SECTION':<14} NAME",
    ]
    for r in rows:
        lines.append(f"{r['address']:#18x} {r['size']:>8} {r['kind']:<7} {r['section']:<14} {r['name']}")
    return "\n".join(lines)


def layout(rec: dict[str, Any]) -> str:
    size = rec["size"]
    head = (
        f"type {rec['type']} {rec['kind']}  /* size {size} ({size:#x}) */"
        if size is not None
        else (f"type {rec['type']} {rec['kind']}")
    )
    lines = [head, f"  {'OFFSET':>6} {'SIZE':>5}  FIELD"]
    holes = {}
    for h in rec["holes"]:
        holes.setdefault(h["after"], []).append(h)
    for f in rec["fields"]:
        indent = "  " * f["depth"]
        fsize = "?" if f["size"] is None else str(f["size"])
        lines.append(f"  {f['offset']:#6x} {fsize:>5}  {indent}{f['name']} {f['type']}")
        for h in holes.get(f["name"], []):
            lines.append(f"  {h['offset']:#6x} {h['size']:>5}  {indent}/* hole: {h['size']} bytes padding */")
    return "\n".join(lines)


def disasm(listing: dict[str, Any]) -> str:
    lines = [
        f"TEXT {listing['function']} {listing['address']:#x}-{listing['address'] + listing['size']:#x}"
        f" ({listing['size']} bytes, {listing['arch']})"
    ]
    if listing["size"] == 0:
        lines.append("  (a zero-size label: no instructions of its own)")
    elif listing["source"] == "none":
        lines.append("  (no line table: instructions only)")
    elif listing["source"] == "gopclntab":
        lines.append("  (no DWARF: source lines from .gopclntab)")
    last = None
    for ins in listing["instructions"]:
        where = (ins.get("file"), ins.get("line"), tuple(c["function"] for c in ins.get("inlined", ())))
        if where != last and ins.get("file"):
            loc = f"{short_path(ins['file'])}:{ins['line']}"
            chain = ins.get("inlined")
            if chain:
                inner = chain[-1]
                loc += f"  (inlined {inner['function']}, called at {short_path(inner['call_file'])}:{inner['call_line']})"
            lines.append(f"  {loc}")
        last = where
        ops = ins["operands"]
        if ins.get("target_symbol"):
            ops = f"{ops} <{ins['target_symbol']}>"
        elif ins.get("target_section"):
            ops = f"{ops} <{ins['target_section']}>"
        elif ins.get("data_symbol"):
            ops = f"{ops} <{ins['data_symbol']}>"
        lines.append(f"    {ins['address']:#x}  {ins['bytes']:<22} {ins['mnemonic']:<7} {ops}")
    return "\n".join(lines)


def calls(rec: dict[str, Any]) -> str:
    lines = [f"calls of {rec['function']}: {len(rec['calls'])}"]
    for c in rec["calls"]:
        if c["indirect"]:
            target = f"indirect ({c['operands']})"
        elif c["target"] is None:  # an address no symbol covers
            where = c.get("target_section")
            target = f"{c['target_address']:#x}" + (f" (in {where})" if where else " (no symbol)")
        else:
            target = c["target"]
        via = f"  [inlined {c['inlined_from']}]" if c["inlined_from"] else ""
        lines.append(f"  {c['address']:#x}  {target:<48} {c['line'] or '?'}{via}")
    return "\n".join(lines)


def consts(rows: dict[str, list]) -> str:
    lines = [f"{'NAME':<48} {'VALUE':>20}  TYPE"]
    for name in sorted(rows):
        value, tname = rows[name]
        lines.append(f"{name:<48} {value:>20}  {tname}")
    return "\n".join(lines)


def crosscheck(rec: dict[str, Any], show_all: bool = False) -> str:
    s, c, k = rec["structs"], rec["consts"], rec["calls"]
    lines = [
        f"crosscheck {rec['binary']} (go{rec['binary_go']}, {rec['arch']}) against source go{rec['source_go']}",
        f"  structs: {s['equal']}/{s['total']} with the same fields in the same order",
        f"  consts:  {c['equal']}/{c['total']} equal ({c['status_equal']}/{c['status_total']} status values)",
        f"  calls:   {k['both']}/{k['total']} direct edges of scheduler functions in both; the rest: "
        + ", ".join(f"{n} {r}" for r, n in sorted(k["reasons"].items()) if r != "both"),
    ]
    for st in s["structs"]:
        if st["status"] == "equal" and not show_all:
            continue
        lines.append(
            f"  struct {st['struct']}: {st['status']}"
            + (f" — {st['explanation']}" if "explanation" in st else "")
        )
        for d in st.get("differences", []):
            lines.append(f"      {d['side']:<7} {d['field']}: {d['explanation']}")
    for d in c["differences"]:
        lines.append(f"  const {d['const']}: source {d['source']} binary {d['binary']} — {d['explanation']}")
    for f in k["functions"]:
        shown = [e for e in f["edges"] if show_all or e["in"] != "both"]
        if not shown:
            continue
        lines.append(f"  {f['function']} ({f['binary_symbol']}):")
        for e in shown:
            callee = e["callee"] if e["callee"] != "*" else f"{e['indirect']} indirect call(s)"
            lines.append(f"      {e['in']:<7} {callee:<44} {e['explanation']}")
    return "\n".join(lines)
