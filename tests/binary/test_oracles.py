"""Differential tests against Go's and GNU's own tools.

* layouts against gdb ``ptype /o`` (offsets, sizes, field names and order);
* constants against gdb ``print``;
* call sites and per-instruction source lines against ``go tool objdump -s``;
* symbols against ``readelf -s``.

Each runs on binaries built by two Go releases for amd64 and arm64.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from goblueprint.binary.disasm import calls, disassemble
from goblueprint.binary.session import open_all

from .conftest import ARCHES, RELEASES, gdb_batch, have_gdb

pytestmark = pytest.mark.slow

BUILDS = [(go, arch) for go in RELEASES for arch in ARCHES]
TYPES = ("runtime.g", "runtime.m", "runtime.p", "runtime.gobuf", "runtime.schedt", "runtime.sudog",
         "runtime.mutex", "runtime.hchan", "main.point")  # fmt: skip
FUNCS = (
    "runtime.schedule",
    "runtime.execute",
    "runtime.findRunnable",
    "runtime.park_m",
    "runtime.goexit0",
    "runtime.newproc1",
    "runtime.gopark",
    "runtime.mcall",
    "runtime.gogo.abi0",
    "main.main",
    "main.sum",
    "runtime.lock2",
    "runtime.chansend",
    "runtime.chanrecv",
    "runtime.call1073741824.abi0",
)  # fmt: skip  (the last: an arm64 literal pool inside)

_PTYPE_FIELD = re.compile(r"^/\*\s+(\d+)(?::\s*\d+)?\s+\|\s+(\d+) \*/\s+(.*?)(\w+)(?:\[\d+\])*;$")
_PTYPE_HEAD = re.compile(r"type = struct (\S+) \{")
_PTYPE_TOTAL = re.compile(r"/\* total size \(bytes\):\s+(\d+) \*/")


def parse_ptype(out: str) -> dict[str, dict]:
    """Top-level fields of each struct in `ptype /o` output (nested bodies skipped)."""
    result: dict[str, dict] = {}
    current: dict | None = None
    depth = 0
    for raw in out.splitlines():
        line = raw.strip()
        head = _PTYPE_HEAD.search(line)
        if head and current is None:
            current = {"fields": [], "size": None}
            result[head.group(1)] = current
            depth = 1
            continue
        if current is None:
            continue
        if line.endswith("{"):
            depth += 1
            m = re.match(r"^/\*\s+(\d+)\s+\|\s+(\d+) \*/", line)
            if depth == 2 and m:
                current["pending"] = (int(m.group(1)), int(m.group(2)))
            continue
        if line.startswith("}") and depth > 1:
            depth -= 1
            name = re.search(r"(\w+);$", line)
            pending = current.pop("pending", None)
            if depth == 1 and name and pending:
                current["fields"].append((name.group(1), pending[0], pending[1]))
            continue
        total = _PTYPE_TOTAL.search(line)
        if total and depth == 1:
            current["size"] = int(total.group(1))
            current = None
            continue
        m = _PTYPE_FIELD.match(line)
        if m and depth == 1:
            current["fields"].append((m.group(4), int(m.group(1)), int(m.group(2))))
    return result


@pytest.mark.skipif(not have_gdb(), reason="gdb not installed (apt-get install gdb)")
@pytest.mark.parametrize(("go", "arch"), BUILDS)
def test_layout_matches_gdb_ptype(go_binary, go, arch):
    from goblueprint.binary.layout import layout

    path = go_binary("hello", go, arch)
    out = gdb_batch(path, "set language c", *[f"ptype /o struct '{t}'" for t in TYPES])
    want = parse_ptype(out)
    assert set(want) == set(TYPES), f"gdb did not describe every type: {sorted(want)}"
    dw = open_all(str(path)).dwarf
    equal = total = 0
    for t in TYPES:
        rec = layout(dw, t)
        assert rec["size"] == want[t]["size"], t
        got = [(f["name"], f["offset"], f["size"]) for f in rec["fields"]]
        assert [g[:2] for g in got] == [w[:2] for w in want[t]["fields"]], t
        for f, (_name, _off, gdb_size) in zip(rec["fields"], want[t]["fields"], strict=True):
            total += 1
            if f["size"] == gdb_size:
                equal += 1
            else:
                # gdb sizes a Go func value by its DWARF subroutine type (1, a GNU
                # extension); the field really holds a pointer, as Go's own offsets show.
                assert f["type"].startswith("func(") and gdb_size == 1 and f["size"] == 8, (t, f)
    assert total > 150 and equal >= total - 3


@pytest.mark.skipif(not have_gdb(), reason="gdb not installed (apt-get install gdb)")
@pytest.mark.parametrize("go", RELEASES)
def test_consts_match_gdb(go_binary, go):
    path = go_binary("hello", go, "amd64")
    consts = open_all(str(path)).dwarf.consts
    names = sorted(n for n in consts if re.match(r"runtime\.(_G|_P|forcePreemptNS$|_Gscan)", n))
    assert len(names) > 15
    out = gdb_batch(path, *[f"print '{n}'" for n in names])
    values = [int(v) for v in re.findall(r"^\$\d+ = (-?\d+)$", out, re.M)]
    assert values == [consts[n][0] for n in names]


_OBJDUMP_INS = re.compile(r"^\s+(\S+):(\d+)\s+0x([0-9a-f]+)\s+([0-9a-f]+)\s+(.*?)\s*$")


def objdump(go_tool, go: str, path, func: str) -> list[tuple[str, int, int, str]]:
    out = go_tool(go, "objdump", "-s", f"^{re.escape(func)}$", str(path))
    rows = []
    for line in out.splitlines():
        m = _OBJDUMP_INS.match(line)
        if m:
            rows.append((m.group(1), int(m.group(2)), int(m.group(3), 16), m.group(5)))
    return rows


@pytest.mark.parametrize(("go", "arch"), BUILDS)
def test_calls_and_lines_match_go_objdump(go_binary, go_tool, go, arch):
    path = go_binary("hello", go, arch)
    opened = open_all(str(path))
    sites_equal = sites_total = lines_equal = lines_total = data_refs = 0
    for func in FUNCS:
        ref = objdump(go_tool, go, path, func)
        assert ref, f"objdump shows nothing for {func}"
        listing = disassemble(opened.binary, opened.symbols, opened.dwarf, func)
        # Same instruction boundaries as Go's disassembler.
        assert [i["address"] for i in listing["instructions"]] == [r[2] for r in ref], func
        for ins, (file, line, _addr, text) in zip(listing["instructions"], ref, strict=True):
            lines_total += 1
            lines_equal += ins.get("file", "").rsplit("/", 1)[-1] == file and ins.get("line") == line
            # RIP-relative data operands name the same symbol+offset as Go's disassembler.
            sb = re.search(r"(?:^|\s)(\S+?)(?:\+(\d+))?\(SB\)", text)
            if arch == "amd64" and sb and not text.startswith(("CALL", "JMP")) and "data_symbol" in ins:
                want = sb.group(1) + (f"+{int(sb.group(2)):#x}" if sb.group(2) else "")
                assert ins["data_symbol"] == want, (func, hex(ins["address"]), text)
                data_refs += 1
        want_direct = {}
        want_indirect = set()
        for _file, _line, addr, text in ref:
            m = re.match(r"CALL (\S+)\(SB\)", text)
            if m:
                want_direct[addr] = m.group(1)
            elif text.startswith("CALL "):
                want_indirect.add(addr)
        rec = calls(listing)
        got_direct = {c["address"]: c["target"] for c in rec["calls"] if not c["indirect"]}
        got_indirect = {c["address"] for c in rec["calls"] if c["indirect"]}
        sites_total += len(want_direct) + len(want_indirect)
        sites_equal += sum(1 for a, t in want_direct.items() if got_direct.get(a) == t)
        sites_equal += len(want_indirect & got_indirect)
        assert got_direct == want_direct, func
        assert got_indirect == want_indirect, func
    assert sites_equal == sites_total > 50
    assert lines_equal == lines_total
    assert data_refs > 20 or arch != "amd64"


# readelf prints sizes of 100000 and more in hex; Go names may contain spaces.
_READELF = re.compile(r"^\s*\d+:\s+([0-9a-f]+)\s+(0x[0-9a-f]+|\d+)\s+(FUNC|OBJECT)\s+\w+\s+\w+\s+\S+\s(.+)$")


@pytest.mark.skipif(
    shutil.which("readelf") is None, reason="readelf not installed (apt-get install binutils)"
)
@pytest.mark.parametrize(("go", "arch"), BUILDS)
def test_symbols_match_readelf(go_binary, go, arch):
    path = go_binary("hello", go, arch)
    out = subprocess.run(
        ["readelf", "-s", "-W", str(path)], capture_output=True, text=True, check=True
    ).stdout
    want = sorted(
        (m.group(4), int(m.group(1), 16), int(m.group(2), 0), m.group(3).lower())
        for m in map(_READELF.match, out.splitlines())
        if m
    )
    rows = open_all(str(path)).symbols.rows
    got = sorted(
        (r["name"], r["address"], r["size"], r["kind"]) for r in rows if r["kind"] in ("func", "object")
    )
    assert len(want) > 1000
    assert got == want


@pytest.mark.parametrize("go", RELEASES)
def test_an_address_shared_with_a_zero_size_label_names_the_function(go_binary, go_tool, go):
    # runtime.text (size 0) and the first function of .text share an address; a call
    # there reaches the function, and Go's objdump names the function.
    path = go_binary("hello", go, "amd64")
    opened = open_all(str(path))
    syms = opened.symbols
    sized: dict[int, set[str]] = {}
    for f in syms.funcs:
        if f.hi > f.lo:
            sized.setdefault(f.lo, set()).add(f.name)
    shared = [f for f in syms.funcs if f.hi == f.lo and f.lo in sized]
    assert "runtime.text" in {f.name for f in shared}
    for f in shared:
        assert syms.describe(f.lo) in sized[f.lo], f.name
    # Go 1.26+: runtime.panicBounds64 calls internal/abi.BoundsDecode, laid out first.
    if "runtime.panicBounds64" in {f.name for f in syms.funcs}:
        ref = objdump(go_tool, go, path, "runtime.panicBounds64")
        want = {a: m.group(1) for _f, _l, a, t in ref if (m := re.match(r"CALL (\S+)\(SB\)", t))}
        listing = disassemble(opened.binary, syms, opened.dwarf, "runtime.panicBounds64")
        got = {c["address"]: c["target"] for c in calls(listing)["calls"] if not c["indirect"]}
        assert "internal/abi.BoundsDecode" in want.values()
        assert got == want
