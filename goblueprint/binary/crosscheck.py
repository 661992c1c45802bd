"""Cross-check a binary's DWARF and machine code against the runtime source.

Three comparisons, each difference carrying an explanation:

* struct fields (names and order) of scheduler structs: DWARF vs source;
* constants (status values and every other runtime constant in both);
* direct call edges of scheduler functions: call instructions vs source calls.

The source side comes from goblueprint.source.facts (the Go helper's parse of
the GOROOT's runtime package, for linux/amd64).
"""

from __future__ import annotations

from typing import Any

from goblueprint.binary.disasm import calls, disassemble
from goblueprint.binary.session import Opened
from goblueprint.errors import BinaryError

STRUCTS = ("g", "m", "p", "schedt", "gobuf", "sudog", "hchan", "waitq", "mutex", "gQueue", "gList",
           "stack", "timers", "timer", "notInHeap", "funcval", "_defer", "_panic")  # fmt: skip
SCHED_FUNCS = ("schedule", "execute", "findRunnable", "park_m", "goexit0", "gopark", "goready", "ready",
               "newproc", "newproc1", "gosched_m", "goschedImpl", "mstart1", "schedinit", "stopm", "startm",
               "handoffp", "wakep", "injectglist", "entersyscall", "reentersyscall", "exitsyscall",
               "exitsyscall0", "casgstatus", "preemptone", "retake", "sysmon", "mcall", "gogo", "systemstack",
               "gopreempt_m", "goyield_m", "checkTimers", "runqget", "runqput", "globrunqget")  # fmt: skip

# Calls the compiler inserts on its own: they have no call in the source.
COMPILER_CALLS = {
    "morestack": "stack-growth check in the prologue (inserted by the compiler)",
    "morestack_noctxt": "stack-growth check in the prologue (inserted by the compiler)",
    "gcWriteBarrier": "write barrier (inserted by the compiler)",
    "panicIndex": "bounds check (inserted by the compiler)",
    "panicSlice": "bounds check (inserted by the compiler)",
    "panicshift": "shift check (inserted by the compiler)",
    "panicdivide": "division check (inserted by the compiler)",
    "typedmemmove": "typed copy of a struct value (inserted by the compiler)",
    "memmove": "copy of a large value (inserted by the compiler)",
    "memclrNoHeapPointers": "zeroing of a large value (inserted by the compiler)",
    "duffzero": "zeroing (Duff's device, inserted by the compiler)",
    "duffcopy": "copy (Duff's device, inserted by the compiler)",
    "racefuncenter": "race instrumentation",
    "racefuncexit": "race instrumentation",
}
COMPILER_PREFIXES = ("panicIndex", "panicSlice", "gcWriteBarrier", "panicExtend", "wbZero", "wbMove")
# Calls the compiler turns into instructions (no CALL in the binary).
INTRINSICS = {"getg", "getcallerpc", "getcallersp", "add", "noescape", "KeepAlive",
              "Sizeof", "Offsetof", "Alignof", "len", "cap", "unsafe.Pointer", "abi.FuncPCABI0",
              "abi.FuncPCABIInternal", "sys.GetCallerPC", "sys.GetCallerSP", "sys.GetClosurePtr",
              "sys.Prefetch", "sys.PrefetchStreamed"}  # fmt: skip


def go_name(symbol: str) -> str:
    """A binary symbol in the source's spelling: runtime.(*p).init -> (*p).init,
    internal/runtime/atomic.(*Bool).Load -> (*atomic.Bool).Load."""
    name = symbol.removesuffix(".abi0")
    slash = name.rfind("/", 0, name.find("(") if "(" in name else len(name))
    head, tail = name[: slash + 1], name[slash + 1 :]
    del head
    pkg, dot, rest = tail.partition(".")
    if not dot:
        return name
    if pkg == "runtime":
        return rest
    if rest.startswith("(*"):
        return f"(*{pkg}.{rest[2:]}"
    if rest.startswith("("):
        return f"({pkg}.{rest[1:]}"
    return f"{pkg}.{rest}"


def _structs(opened: Opened, facts: dict[str, Any]) -> dict[str, Any]:
    from goblueprint.binary.layout import find_type, layout

    by_name = {s["name"]: s for s in facts["structs"]}
    out = []
    equal = total = 0
    for name in STRUCTS:
        src = by_name.get(name)
        if src is None:
            continue
        src_fields = [f["name"] for f in src["fields"]]
        try:
            find_type(opened.dwarf, f"runtime.{name}")
        except BinaryError:
            out.append({"struct": name, "status": "absent", "explanation":
                        "type not in this binary's DWARF: no code of the binary uses it (linker dropped it)"})  # fmt: skip
            continue
        bin_fields = [f["name"] for f in layout(opened.dwarf, f"runtime.{name}")["fields"]]
        total += 1
        diffs = []
        only_src = [f for f in src_fields if f not in bin_fields]
        only_bin = [f for f in bin_fields if f not in src_fields]
        for f in only_src:
            diffs.append({"field": f, "side": "source", "explanation":
                          "field declared under a build constraint or for another GOARCH/GOOS "
                          "(the source facts are for linux/amd64), or a release mismatch"})  # fmt: skip
        for f in only_bin:
            diffs.append({"field": f, "side": "binary", "explanation":
                          "field from an arch- or OS-specific declaration, or a release mismatch"})  # fmt: skip
        common_src = [f for f in src_fields if f in bin_fields]
        common_bin = [f for f in bin_fields if f in src_fields]
        order_ok = common_src == common_bin
        if not order_ok:
            diffs.append({"field": "*", "side": "both", "explanation": "same fields in a different order"})
        if not diffs:
            equal += 1
        out.append({"struct": name, "status": "equal" if not diffs else "different", "fields_source": len(src_fields),
                    "fields_binary": len(bin_fields), "differences": diffs})  # fmt: skip
    return {"equal": equal, "total": total, "structs": out}


def _consts(opened: Opened, facts: dict[str, Any]) -> dict[str, Any]:
    dw_consts = opened.dwarf.consts
    out = []
    equal = total = 0
    status_total = status_equal = 0
    for c in facts["consts"]:
        name = c["name"]
        val = c.get("value")
        if not isinstance(val, int) or f"runtime.{name}" not in dw_consts:
            continue
        total += 1
        is_status = name.startswith(("_G", "_P")) and not name.startswith(("_GC", "_Go"))
        status_total += is_status
        bval = dw_consts[f"runtime.{name}"][0]
        # DWARF stores the constant in its type's width; compare modulo 2**64.
        if (bval - val) % (1 << 64) == 0:
            equal += 1
            status_equal += is_status
            continue
        out.append({"const": name, "source": val, "binary": bval, "explanation":
                    "value depends on GOARCH/GOOS (source facts are linux/amd64) or on the release"})  # fmt: skip
    return {"equal": equal, "total": total, "status_equal": status_equal, "status_total": status_total,
            "differences": out}  # fmt: skip


def canon(name: str) -> str:
    """One spelling for both sides: (*m).x, (m).x and m.x all become m.x."""
    if name.startswith("("):
        recv, _, meth = name[1:].partition(")")
        return f"{recv.lstrip('*')}{meth}"
    return name


def _calls(opened: Opened, facts: dict[str, Any]) -> dict[str, Any]:
    from goblueprint.source.calls import CallGraph

    graph = CallGraph(facts)
    params = {f["name"]: set(f.get("params") or []) for f in facts["funcs"]}
    out = []
    agree = total = 0
    reasons: dict[str, int] = {}
    for fname in SCHED_FUNCS:
        func = None
        for cand in (f"runtime.{fname}", f"runtime.{fname}.abi0"):
            try:
                func = opened.symbols.function(cand)
                break
            except BinaryError:
                continue
        if func is None:
            continue
        listing = disassemble(opened.binary, opened.symbols, opened.dwarf, func.name)
        sites = calls(listing)["calls"]
        rec = opened.dwarf.function(func.name) if opened.dwarf else None
        inlined = {canon(go_name(i[0])) for i in rec[3]} if rec else set()
        src: dict[str, tuple[str, str]] = {}
        for e in graph.out.get(fname, []):
            if e.kind in ("call", "asm", "systemstack", "mcall", "defer"):
                src.setdefault(canon(e.callee), (e.callee, e.kind))
        jumps = {canon(go_name(i["target_symbol"])) for i in listing["instructions"]
                 if i.get("kind") == "jump" and i.get("target_symbol") and "+" not in i["target_symbol"]}  # fmt: skip
        binary: dict[str, dict[str, Any]] = {}
        indirect = 0
        for site in sites:
            if site["indirect"]:
                indirect += 1
            elif site["target"]:
                binary.setdefault(canon(go_name(site["target"].split("+")[0])), site)
        edges = []
        for key in sorted(set(src) | set(binary)):
            if key in src and key in binary:
                reason, why = "both", ""
            elif key in src and key in jumps:
                reason, why = "tail-call", "reached by a JMP to the function (tail call), not a CALL"
            elif key in src:
                reason, why = _why_source_only(src[key], inlined, params.get(fname, set()), opened)
            else:
                reason, why = _why_binary_only(key, binary[key])
            total += 1
            agree += reason == "both"
            reasons[reason] = reasons.get(reason, 0) + 1
            name = src[key][0] if key in src else go_name(binary[key]["target"])
            side = "both" if reason == "both" else ("source" if key in src else "binary")
            edges.append({"callee": name, "in": side, "reason": reason, "explanation": why})
        if indirect:
            kind = ("mcall's indirect call of fn on g0" if fname == "mcall"
                    else "calls through a func value or interface (fn parameters, closures, method values)")  # fmt: skip
            edges.append({"callee": "*", "in": "binary", "indirect": indirect, "reason": "indirect",
                          "explanation": kind})  # fmt: skip
        out.append({"function": fname, "binary_symbol": func.name, "edges": edges})
    return {"both": agree, "total": total, "reasons": reasons, "functions": out}


def _why_source_only(
    edge: tuple[str, str], inlined: set[str], params: set[str], opened: Opened
) -> tuple[str, str]:
    callee, kind = edge
    key = canon(callee)
    if kind in ("mcall", "systemstack"):
        return (
            "func-value",
            f"passed to {kind} as a func value: the binary calls {kind}, which calls it indirectly",
        )
    if callee in params:
        return "func-value", "call of a func-value parameter: an indirect call in the binary"
    if key in inlined:
        return "inlined", "inlined: a DW_TAG_inlined_subroutine of this function"
    if key in INTRINSICS or key.split(".")[-1] in INTRINSICS:
        return "intrinsic", "compiler intrinsic: becomes instructions, not a call"
    if key not in _runtime_names(opened):
        return (
            "absent",
            "no such function in the binary: inlined at every site, or dead code the linker dropped",
        )
    return "unexplained", "call not found in the machine code (dead branch for this build, or folded away)"


def _runtime_names(opened: Opened) -> set[str]:
    names = getattr(opened, "_runtime_names", None)
    if names is None:
        names = {canon(go_name(f.name)) for f in opened.symbols.funcs if f.name.startswith("runtime.")}
        opened._runtime_names = names  # type: ignore[attr-defined]
    return names


def _why_binary_only(key: str, site: dict[str, Any]) -> tuple[str, str]:
    if key in COMPILER_CALLS:
        return "compiler", COMPILER_CALLS[key]
    if key.startswith(COMPILER_PREFIXES):
        return "compiler", "check or barrier inserted by the compiler"
    if site.get("inlined_from"):
        return "via-inlined", f"made by the inlined body of {go_name(site['inlined_from'])}"
    return "unexplained", "not among the source's direct calls of this function"


def crosscheck(opened: Opened, facts: dict[str, Any]) -> dict[str, Any]:
    if opened.dwarf is None:
        raise BinaryError(
            f"{opened.binary.path}: crosscheck needs DWARF (binary built with -ldflags=-w or -s)"
        )
    return {
        "binary": opened.binary.path,
        "binary_go": opened.binary.go_version,
        "source_go": facts.get("go_version"),
        "arch": opened.binary.arch,
        "structs": _structs(opened, facts),
        "consts": _consts(opened, facts),
        "calls": _calls(opened, facts),
    }
