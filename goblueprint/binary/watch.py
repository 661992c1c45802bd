"""Watch the scheduler of a running Go program under gdb.

Breakpoints go at the exact entry address of each watched function (not after
gdb's prologue analysis), so the Go register ABI holds: the current g is in R14
(amd64) or R28 (arm64) and the first argument in RAX / X0.  Field offsets come
from our own DWARF layouts, never from gdb's type evaluation, so the records
also test the layouts on a live process.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterator
from typing import Any

from goblueprint.binary.layout import layout
from goblueprint.binary.mi import Gdb
from goblueprint.binary.session import open_all
from goblueprint.errors import BinaryError, CaptureError

# Where the Go internal ABI keeps things at a function's entry (cmd/compile/abi-internal.md).
REGS = {
    "amd64": {"g": "$r14", "arg0": "$rax", "sp": "$rsp", "fp": "$rbp", "pc": "$rip"},
    "arm64": {"g": "$x28", "arg0": "$x0", "sp": "$sp", "fp": "$x29", "pc": "$pc"},
}
# platform.machine() -> GOARCH of the binaries that run here.
HOST_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
# Functions whose first argument is the *g being switched to.
SWITCH_ARG = {"runtime.execute", "runtime.casgstatus", "runtime.ready"}
# Signals Go uses for itself; gdb must pass them silently or the run stalls.
QUIET_SIGNALS = ("SIGURG", "SIGPIPE", "SIGPROF", "SIGCHLD", "SIGWINCH")


def _field(dw: Any, type_name: str, path: str) -> int:
    for f in layout(dw, type_name, expand=True)["fields"]:
        if f["name"] == path:
            return f["offset"]
    raise BinaryError(f"{type_name} has no field {path} in this binary's DWARF")


def offsets(dw: Any) -> dict[str, int]:
    return {
        "g.m": _field(dw, "runtime.g", "m"),
        "g.goid": _field(dw, "runtime.g", "goid"),
        "g.atomicstatus": _field(dw, "runtime.g", "atomicstatus"),
        "m.curg": _field(dw, "runtime.m", "curg"),
        "m.id": _field(dw, "runtime.m", "id"),
        "m.procid": _field(dw, "runtime.m", "procid"),
    }


def status_names(consts: dict[str, list]) -> dict[int, str]:
    names = {}
    for name, (value, _t) in consts.items():
        short = name.removeprefix("runtime.")
        if short.startswith("_G") and not short.startswith("_Gscan") and short[2:3].islower():
            names.setdefault(value, short[2:])
    return names


def _status(value: int, names: dict[int, str]) -> str:
    scan = value & 0x1000
    base = names.get(value & ~0x1000, str(value & ~0x1000))
    return f"scan{base}" if scan else base


def watch(
    path: str,
    at: list[str],
    *,
    count: int = 20,
    args: list[str] | None = None,
    timeout: float = 60,
) -> Iterator[dict[str, Any]]:
    """Run BIN under gdb and yield one record per breakpoint hit (at most COUNT).

    The binary, its DWARF and the functions are checked here, before any record is
    asked for (a caller's table header is not printed above a bad input's error)."""
    opened = open_all(path, need_dwarf=True, warn=False)
    if opened.binary.arch not in REGS:
        raise BinaryError(f"{path}: cannot watch {opened.binary.arch} binaries")
    host = HOST_ARCH.get(platform.machine(), platform.machine())
    if opened.binary.arch != host:
        # gdb would start something else in its place and stop in that program's loader.
        raise BinaryError(f"{path}: an {opened.binary.arch} binary does not run on this {host} machine")
    regs = REGS[opened.binary.arch]
    dw = opened.dwarf
    off = offsets(dw)
    names = status_names(dw.consts)
    entries = {opened.symbols.function(name).lo: name for name in at}
    return _hits(path, opened.binary.entry, entries, count, args, timeout, regs, off, names)


def _hits(path: str, link_entry: int, entries: dict[int, str], count: int, args: list[str] | None,
          timeout: float, regs: dict[str, str], off: dict[str, int], names: dict[int, str]
          ) -> Iterator[dict[str, Any]]:  # fmt: skip
    gdb = Gdb(path)
    try:
        gdb.command("-gdb-set language c")
        gdb.command("-gdb-set pagination off")
        gdb.command("-gdb-set startup-with-shell off")
        gdb.command("-inferior-tty-set /dev/null")
        for sig in QUIET_SIGNALS:
            gdb.command(f'-interpreter-exec console "handle {sig} nostop noprint pass"')
        if args:
            gdb.command("-exec-arguments " + " ".join(_quote(a) for a in args))
        # Stopped at its first instruction the program is mapped: a PIE (-buildmode=pie) lies
        # at some load bias from its link addresses, and a breakpoint at a link address
        # could not be inserted.
        gdb.command('-interpreter-exec console "starti"')
        gdb.wait_stopped(timeout)
        bias = _load_bias(gdb, link_entry)
        addrs = {addr + bias: name for addr, name in entries.items()}
        for addr in addrs:
            gdb.command(f"-break-insert *{addr:#x}")
        gdb.command("-exec-continue")
        hits = 0
        while hits < count:
            stop = gdb.wait_stopped(timeout)
            reason = stop.get("reason", "")
            if reason.startswith("exited"):
                # Fewer hits than asked is the program's doing, not ours: say how it ended.
                if reason == "exited-signalled":
                    how = f"was killed by {stop.get('signal-name', 'a signal')}"
                else:
                    how = f"exited with status {int(stop.get('exit-code', '0'), 8)}"  # gdb prints it in octal
                print(f"goblueprint: note: the program {how} after {hits} of {count} hits", file=sys.stderr)
                return
            if reason != "breakpoint-hit":
                if reason == "signal-received":
                    raise CaptureError(f"program stopped by {stop.get('signal-name', 'a signal')}")
                gdb.command("-exec-continue")
                continue
            hits += 1
            yield _record(gdb, hits, stop, addrs, regs, off, names)
            if hits < count:
                gdb.command("-exec-continue")
    finally:
        gdb.close()


def _load_bias(gdb: Gdb, link_entry: int) -> int:
    """Where the program was loaded relative to its link addresses: its entry point as the
    kernel passed it (AT_ENTRY of the auxiliary vector) less the ELF header's."""
    gdb.console.clear()
    gdb.command('-interpreter-exec console "info auxv"')
    for line in "".join(gdb.console).splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[1] == "AT_ENTRY":
            return int(fields[-1], 16) - link_entry
    raise CaptureError("gdb did not show the program's entry point (info auxv has no AT_ENTRY)")


def _quote(arg: str) -> str:
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _read(gdb: Gdb, addr: int, size: int) -> int:
    ctype = {8: "unsigned long", 4: "unsigned int"}[size]
    return int(gdb.eval(f"*({ctype}*){addr:#x}"))


def _g_info(gdb: Gdb, g: int, off: dict[str, int], names: dict[int, str]) -> dict[str, Any] | None:
    if g == 0:
        return None
    status = _read(gdb, g + off["g.atomicstatus"], 4)
    return {"goid": _read(gdb, g + off["g.goid"], 8), "status": _status(status, names), "addr": g}


def _record(gdb: Gdb, hit: int, stop: dict[str, Any], addrs: dict[int, str], regs: dict[str, str],
            off: dict[str, int], names: dict[int, str]) -> dict[str, Any]:  # fmt: skip
    reg = {k: int(gdb.eval(f"(unsigned long){v}")) for k, v in regs.items()}
    g = reg["g"]
    m = _read(gdb, g + off["g.m"], 8) if g else 0
    curg = _read(gdb, m + off["m.curg"], 8) if m else 0
    func = addrs.get(reg["pc"], "?")
    rec: dict[str, Any] = {
        "hit": hit,
        "function": func,
        "thread": int(stop.get("thread-id", 0) or 0),
        "lwp": _read(gdb, m + off["m.procid"], 8) if m else None,
        "m": _read(gdb, m + off["m.id"], 8) if m else None,
        "g": _g_info(gdb, g, off, names),
        "curg": _g_info(gdb, curg, off, names),
        "rsp": reg["sp"],
        "rbp": reg["fp"],
        "rip": reg["pc"],
    }
    if func.removesuffix(".abi0") in SWITCH_ARG:
        rec["switch_to"] = _g_info(gdb, reg["arg0"], off, names)
    return rec
