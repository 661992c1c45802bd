"""Differential checks against Go's own tools: go/parser over all of GOROOT/src, `go list`
for the file set, and `go tool objdump` for call edges of compiled scheduler functions."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest

from goblueprint import toolchain
from goblueprint.source import calls, facts, tables
from goblueprint.toolchain.cachelock import publish

pytestmark = pytest.mark.slow

RELEASES = ("1.27", "1.22")

# Calls the compiler inserts that the source does not spell as calls (builtins, runtime helpers).
COMPILER_INSERTED = re.compile(
    r"^(morestack|panic|goPanic|gcWriteBarrier|print|growslice|newobject|typedmemmove|memmove|memclr|wbZero|"
    r"wbMove|duff|racefunc|convT|assert|mapaccess|mapassign|mapdelete|makeslice|makemap|concatstring|deferreturn|"
    r"deferproc|gopanic|memequal|cmpstring|slicebytetostring|stringtoslicebyte|typedslicecopy|chanrecv|chansend|"
    r"selectnb|gorecover|efaceeq|ifaceeq|strequal|interequal|nilinterequal|int64div|uint64div|float64|"
    r"makechan|closechan|newarray|mallocgc|unsafeslice|unsafestring|checkptr|rand32)"
)
SCHED_FUNCS = (
    "newproc", "newproc1", "schedule", "park_m", "goexit0", "execute", "findRunnable", "gopark", "goready",
    "ready", "handoffp", "stopm", "startm", "wakep", "procresize", "entersyscall", "reentersyscall",
    "exitsyscall", "casgstatus", "stopTheWorldWithSema", "gcstopm", "retake", "sysmon", "mstart1", "gdestroy",
)  # fmt: skip


# The oldest release in scope, the one that added new(expr), the one that added generic methods, and 1.22.
@pytest.mark.parametrize("release", ["1.21", "1.22", "1.26", "1.27"])
def test_every_goroot_file_parses(release):
    tc = _installed(release)
    report = facts.parse_check(facts.Goroot(tc.goroot, tc.version))
    assert report["files"] > 5000
    assert report["errors"] == []


def _installed(release):
    try:
        return toolchain.find(release)
    except toolchain.ToolchainError:
        return toolchain.install(release)


@pytest.mark.parametrize("release", RELEASES)
def test_file_set_matches_go_list(real_facts, release):
    tc = _installed(release)
    f = real_facts(release)
    env = {"GOOS": tables.GOOS, "GOARCH": tables.GOARCH, "GOFLAGS": ""}
    out = tc.run(["list", "-f", "{{join .GoFiles \" \"}}|{{join .SFiles \" \"}}", "runtime"],
                 cwd=tc.goroot / "src", env=env).stdout.strip()  # fmt: skip
    go_files, s_files = out.split("|")
    assert sorted(f["files"]) == sorted(f"src/runtime/{n}" for n in go_files.split())
    assert sorted(f["sfiles"]) == sorted(f"src/runtime/{n}" for n in s_files.split())


PROG_GO_MOD = "module prog\n\ngo 1.21\n"
PROG_MAIN = "package main\n\nfunc main() {\n\tgo func() {}()\n}\n"


def _binary(tc: toolchain.Toolchain) -> Path:
    """A tiny program (the runtime is what we disassemble), cached by its source and the release."""
    key = hashlib.sha256((PROG_GO_MOD + PROG_MAIN).encode()).hexdigest()[:12]
    out_dir = toolchain.cache_dir() / "source" / f"objdump-prog-{key}-go{tc.version}"

    def compile_into(tmp: Path) -> None:
        src = tmp / "src"
        src.mkdir(parents=True)
        (src / "go.mod").write_text(PROG_GO_MOD)
        (src / "main.go").write_text(PROG_MAIN)
        tc.run(["build", "-o", str(tmp / "prog"), "."], cwd=src, env={"GOFLAGS": "-mod=mod"})
        shutil.rmtree(src)

    return publish(out_dir, compile_into, ready=lambda: (out_dir / "prog").exists()) / "prog"


_TEXT = re.compile(r"^TEXT runtime\.(\S+)\(SB\) (\S+)")
_CALL = re.compile(r"^\s+(\S+?):(\d+)\s+0x[0-9a-f]+\s+[0-9a-f]+\s+CALL runtime\.(\S+?)\(SB\)")


def _our_name(symbol: str) -> str:
    name = re.sub(r"\.abi0$", "", symbol)
    name = re.sub(r"\[.*?\]", "", name)
    name = re.sub(r"(\.func\d+)+(\.\d+)*$", "", name)  # closures belong to their function
    m = re.match(r"^\((\*?\w+)\)\.(\w+)$", name)
    if m:
        return f"({m.group(1)}).{m.group(2)}"
    m = re.match(r"^(\w+)\.(\w+)$", name)  # value receiver: traceLocker.GoPark
    if m:
        return f"({m.group(1)}).{m.group(2)}"
    return name


@pytest.mark.parametrize("release", RELEASES)
def test_compiled_calls_are_in_the_call_graph(real_facts, release):
    """Every CALL the compiler emitted in a scheduler function is an edge of ours (or, when it comes
    from an inlined callee, a short path)."""
    tc = _installed(release)
    f = real_facts(release)
    graph = calls.CallGraph(f)
    decl = {fn["name"]: fn for fn in f["funcs"]}
    pattern = "^runtime\\.(" + "|".join(SCHED_FUNCS) + ")(\\.func[0-9.]+)?$"
    dump = tc.run(["tool", "objdump", "-s", pattern, str(_binary(tc))]).stdout
    current = None
    exact = inlined = 0
    for line in dump.splitlines():
        t = _TEXT.match(line)
        if t:
            current = _our_name(t.group(1))
            continue
        c = _CALL.match(line)
        if not c or current is None:
            continue
        file, lineno, target = c.group(1), int(c.group(2)), _our_name(c.group(3))
        if COMPILER_INSERTED.match(target) or target not in graph.defined:
            continue
        fn = decl[current]
        in_body = fn["file"].endswith("/" + file) and fn["line"] <= lineno <= fn["end"]
        if in_body:
            edges = {(e.callee, e.line) for e in graph.out[current]}
            assert (target, lineno) in edges, (current, target, file, lineno)
            exact += 1
        else:
            assert graph.reaches(current, target, depth=4), (current, target, file, lineno)
            inlined += 1
    assert exact > 100 and inlined > 10, (exact, inlined)


def _dwarf_constants(binary: Path, prefixes: tuple[str, ...]) -> dict[str, int]:
    """Package-level constants the Go linker recorded in DWARF (DW_TAG_constant of the runtime unit)."""
    from elftools.elf.elffile import ELFFile

    found: dict[str, int] = {}
    with open(binary, "rb") as fh:
        dwarf = ELFFile(fh).get_dwarf_info()
        for cu in dwarf.iter_CUs():
            top = cu.get_top_DIE()
            name = top.attributes.get("DW_AT_name")
            if name is None or name.value != b"runtime":
                continue
            for die in top.iter_children():
                if die.tag != "DW_TAG_constant":
                    continue
                const = die.attributes["DW_AT_name"].value.decode()
                if const.startswith(prefixes):
                    found[const.removeprefix("runtime.")] = die.attributes["DW_AT_const_value"].value
    return found


@pytest.mark.parametrize("release", RELEASES)
def test_state_values_match_dwarf(real_facts, release):
    """The compiler's own constant values (DWARF of a built binary) agree with the states we read."""
    from goblueprint.source import states

    tc = _installed(release)
    dwarf = _dwarf_constants(_binary(tc), ("runtime._G", "runtime._P"))
    for machine in ("g", "p"):
        ours = {s.name: s.value for s in states.blueprint(real_facts(release), machine).states}
        assert ours.keys() <= dwarf.keys(), sorted(ours.keys() - dwarf.keys())
        assert {n: dwarf[n] for n in ours} == ours
