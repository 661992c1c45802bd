"""Disassembly of one function with symbolized targets and DWARF source lines."""

from __future__ import annotations

import bisect
import re
from typing import Any

from goblueprint.binary.dwarf import Dwarf
from goblueprint.binary.elf import Binary
from goblueprint.binary.symbols import Symbols

_TARGET = re.compile(r"#?(0x[0-9a-f]+)$")
_RIP_REL = re.compile(r"\[rip ([+-]) (0x[0-9a-f]+)\]")

# Per architecture: which mnemonics call, which jump (direct when the operand is an immediate).
ARCH = {
    "amd64": {"calls": {"call"}, "jumps_prefix": ("j",), "jumps": set()},
    "arm64": {
        "calls": {"bl", "blr"},
        "jumps_prefix": ("b.",),
        "jumps": {"b", "br", "cbz", "cbnz", "tbz", "tbnz"},
    },
}


def _capstone(arch: str) -> Any:
    import capstone

    if arch == "amd64":
        return capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    return capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)


def short_path(path: str) -> str:
    """A GOROOT or module path shortened to what follows the last /src/ (runtime/proc.go)."""
    _, sep, tail = path.rpartition("/src/")
    return tail if sep else path


def disassemble(binary: Binary, syms: Symbols, dw: Dwarf | None, name: str) -> dict[str, Any]:
    func = syms.function(name)
    code = binary.read(func.lo, func.hi - func.lo)
    spec = ARCH[binary.arch]
    rows: list[list] = []
    inlines: list[list] = []
    if dw is not None:
        rec = dw.function(func.name)
        cu = rec[2] if rec is not None else dw.cu_of(func.lo)
        if cu is not None:
            rows = dw.lines_in(cu, func.lo, func.hi)
        if rec is not None:
            inlines = rec[3]
    row_addrs = [r[0] for r in rows]
    out = []
    md = _capstone(binary.arch)
    for addr, size, mnemonic, op_str in md.disasm_lite(code, func.lo):
        ins: dict[str, Any] = {
            "address": addr,
            "bytes": code[addr - func.lo : addr - func.lo + size].hex(),
            "mnemonic": mnemonic,
            "operands": op_str,
        }
        is_call = mnemonic in spec["calls"]
        is_jump = mnemonic in spec["jumps"] or (mnemonic.startswith(spec["jumps_prefix"]) and not is_call)
        if is_call or is_jump:
            m = _TARGET.search(op_str)
            ins["kind"] = "call" if is_call else "jump"
            if m:
                target = int(m.group(1), 16)
                ins["target"] = target
                ins["target_symbol"] = syms.describe(target)
            else:
                ins["indirect"] = True
        rip = _RIP_REL.search(op_str) if binary.arch == "amd64" else None
        if rip:
            disp = int(rip.group(2), 16)
            data = addr + size + (disp if rip.group(1) == "+" else -disp)
            name_ = syms.describe_data(data) or syms.describe(data)
            if name_:
                ins["data_symbol"] = name_
        if rows:
            i = bisect.bisect_right(row_addrs, addr) - 1
            if i >= 0 and rows[i][2] != 0:
                ins["file"], ins["line"] = rows[i][1], rows[i][2]
        out.append(ins)
    # Inlining chains: mark the instructions each inlined range covers (bisect, not a scan per instruction).
    addrs = [ins["address"] for ins in out]
    for callee, ranges, cfile, cline, depth in inlines:
        link = {"function": callee, "call_file": cfile, "call_line": cline, "depth": depth}
        for lo, hi in ranges:
            i = bisect.bisect_left(addrs, lo)
            while i < len(addrs) and addrs[i] < hi:
                out[i].setdefault("inlined", []).append(link)
                i += 1
    for ins in out:
        if "inlined" in ins:
            ins["inlined"].sort(key=lambda c: c["depth"])
    return {
        "function": func.name,
        "address": func.lo,
        "size": func.hi - func.lo,
        "arch": binary.arch,
        "source": "dwarf" if rows else "none",
        "instructions": out,
    }


def calls(listing: dict[str, Any]) -> dict[str, Any]:
    """The call sites of a disassembled function (direct ones symbolized)."""
    sites = []
    for ins in listing["instructions"]:
        if ins.get("kind") != "call":
            continue
        sites.append(
            {
                "address": ins["address"],
                "target": ins.get("target_symbol") if not ins.get("indirect") else None,
                "target_address": ins.get("target"),
                "indirect": bool(ins.get("indirect")),
                "operands": ins["operands"],
                "line": f"{short_path(ins['file'])}:{ins['line']}" if "file" in ins else None,
                "inlined_from": ins["inlined"][-1]["function"] if ins.get("inlined") else None,
            }
        )
    return {"function": listing["function"], "calls": sites}
