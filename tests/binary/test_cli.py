"""The binary commands end to end through goblueprint.cli.main: output shape,
one-line errors with exit 1 for bad input, stripped binaries, crosscheck."""

from __future__ import annotations

import json
import re

import pytest

from goblueprint.binary.elf import open_binary
from goblueprint.binary.pclntab import read_functions
from goblueprint.cli import main

from .conftest import gdb_batch, have_gdb

pytestmark = pytest.mark.slow


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 1
    assert len(lines) == 1 and lines[0].startswith("goblueprint: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("cmd", [["layout", "{bin}", "g"], ["symbols", "{bin}"], ["disasm", "{bin}", "main.main"],
                                 ["consts", "{bin}"], ["calls", "{bin}", "main.main"]])  # fmt: skip
def test_non_elf_and_truncated_files_fail_in_one_line(capsys, tmp_path, go_binary, cmd):
    text_file = tmp_path / "notes.txt"
    text_file.write_text("hello, not an ELF file\n")
    data = go_binary("hello").read_bytes()
    cuts = [tmp_path / f"cut{n}" for n in (3, 40, len(data) // 2, len(data) - 1)]
    for path, n in zip(cuts, (3, 40, len(data) // 2, len(data) - 1), strict=True):
        path.write_bytes(data[:n])
    for path in [text_file, tmp_path / "missing", tmp_path, *cuts]:
        argv = [a.replace("{bin}", str(path)) for a in cmd]
        code, _out, err = run_cli(capsys, "binary", *argv)
        line = one_line_error(code, err)
        assert str(path) in line


def test_unknown_type_and_function(capsys, go_binary):
    path = str(go_binary("hello"))
    code, _, err = run_cli(capsys, "binary", "layout", path, "runtime.nosuchtype")
    assert "unknown type" in one_line_error(code, err)
    code, _, err = run_cli(capsys, "binary", "layout", path, "runtime.gobuff")
    assert "did you mean runtime.gobuf" in one_line_error(code, err)
    code, _, err = run_cli(capsys, "binary", "disasm", path, "runtime.nosuchfunc")
    assert "no function" in one_line_error(code, err)
    code, _, err = run_cli(capsys, "binary", "symbols", path, "--grep", "(")
    assert "bad --grep" in one_line_error(code, err)


@pytest.mark.parametrize("ldflags", ["-s -w", "-w"])
def test_binary_without_dwarf(capsys, go_binary, ldflags):
    stripped = go_binary("hello", ldflags=ldflags)
    full = go_binary("hello")
    code, _, err = run_cli(capsys, "binary", "layout", str(stripped), "runtime.g")
    assert "no DWARF" in one_line_error(code, err)
    code, _, err = run_cli(capsys, "binary", "consts", str(stripped))
    assert "no DWARF" in one_line_error(code, err)
    # Functions (names and ranges) still come from .symtab or .gopclntab.
    code, out, err = run_cli(capsys, "binary", "symbols", str(stripped), "--json")
    assert code == 0
    rec = json.loads(out)
    assert rec["source"] == ("gopclntab" if "-s" in ldflags else "symtab")
    names = {r["name"] for r in rec["symbols"]}
    assert {"runtime.schedule", "runtime.execute", "main.main", "main.sum"} <= names
    code, out, err = run_cli(capsys, "binary", "calls", str(stripped), "main.main", "--json")
    assert code == 0
    got = {c["target"] for c in json.loads(out)["calls"] if not c["indirect"]}
    code, out, _ = run_cli(capsys, "binary", "calls", str(full), "main.main", "--json")
    # .gopclntab names ABI0 functions without the .abi0 suffix the linker gives .symtab.
    want = {c["target"].removesuffix(".abi0") for c in json.loads(out)["calls"] if not c["indirect"]}
    assert "runtime.chanrecv2" in want and "fmt.Fscan" in want
    assert {t.removesuffix(".abi0") for t in got} == want


@pytest.mark.parametrize(("go", "arch"), [("1.27", "amd64"), ("1.22", "arm64")])
def test_pclntab_agrees_with_symtab(go_binary, go, arch):
    b = open_binary(go_binary("hello", go, arch))
    _version, funcs = read_functions(b.section_bytes(".gopclntab"), b.section(".text").addr)
    # .symtab names ABI0 functions with an .abi0 suffix that .gopclntab does not carry.
    syms = {(s.name.removesuffix(".abi0"), s.addr) for s in b.symbols if s.kind == "func"}
    got = {(f.name, f.entry) for f in funcs}
    assert len(got) > 1000
    assert got <= syms
    # Every Go function of .symtab is in the table (linker-made stubs may not be).
    text = {s for s in syms if not s[0].startswith(("go:", "type:"))}
    assert len(text - got) < 0.02 * len(text)


@pytest.mark.skipif(not have_gdb(), reason="gdb not installed (apt-get install gdb)")
@pytest.mark.parametrize("go", ["1.27", "1.22"])
def test_layout_expand_paths_match_gdb_offsetof(capsys, go_binary, go):
    path = go_binary("hello", go)
    code, out, _ = run_cli(capsys, "binary", "layout", str(path), "runtime.g", "--expand", "--json")
    assert code == 0
    rec = json.loads(out)
    nested = [f for f in rec["fields"] if "." in f["name"] and f["size"]]
    assert any(f["name"] == "sched.sp" for f in nested)
    exprs = [f"print (long)&((struct 'runtime.g' *)0)->{f['name']}" for f in nested]
    gdb_out = gdb_batch(path, "set language c", *exprs)
    values = [int(v) for v in re.findall(r"^\$\d+ = (-?\d+)$", gdb_out, re.M)]
    assert values == [f["offset"] for f in nested], gdb_out[-3000:]
    # Holes: every byte of the struct is a leaf field or a hole, exactly once.
    top = [f for f in rec["fields"] if f["depth"] == 0]
    covered = sum(f["size"] for f in top) + sum(h["size"] for h in rec["holes"] if "." not in h["after"])
    assert covered == rec["size"]


def test_disasm_text_shows_inlining_and_symbols(capsys, go_binary):
    code, out, _ = run_cli(capsys, "binary", "disasm", str(go_binary("hello")), "runtime.schedule")
    assert code == 0
    assert out.startswith("TEXT runtime.schedule ")
    assert "<runtime.execute>" in out and "<runtime.lock2>" in out
    assert re.search(r"runtime/proc\.go:\d+", out)
    assert re.search(r"\(inlined runtime\.lockWithRank, called at runtime/lock\w*\.go:\d+\)", out)


@pytest.mark.parametrize(("go", "arch"), [("1.27", "amd64"), ("1.22", "amd64"), ("1.27", "arm64")])
def test_crosscheck_against_same_release_source(capsys, go_binary, go, arch):
    code, out, _ = run_cli(capsys, "binary", "crosscheck", str(go_binary("hello", go, arch)), "--json")
    assert code == 0
    rec = json.loads(out)
    assert rec["binary_go"].startswith(go + ".") and rec["source_go"].startswith(go + ".")
    assert rec["structs"]["total"] >= 15
    if arch == "amd64":  # the source facts are for linux/amd64
        assert rec["structs"]["equal"] == rec["structs"]["total"]
        assert rec["consts"]["equal"] == rec["consts"]["total"] > 500
    assert rec["consts"]["status_equal"] == rec["consts"]["status_total"] >= 10
    funcs = {f["function"]: f for f in rec["calls"]["functions"]}
    sched = {e["callee"]: e for e in funcs["schedule"]["edges"]}
    assert sched["execute"]["in"] == "both" and sched["findRunnable"]["in"] == "both"
    assert sched["lock"]["reason"] == "inlined"
    assert sched["runtime.lock2" if "runtime.lock2" in sched else "lock2"]["reason"] == "via-inlined"
    mcall = [e for e in funcs["mcall"]["edges"] if e["callee"] == "*"]
    assert mcall and "mcall" in mcall[0]["explanation"]
    unexplained = rec["calls"]["reasons"].get("unexplained", 0)
    assert unexplained <= 0.05 * rec["calls"]["total"]


def test_crosscheck_against_other_release_explains_differences(capsys, go_binary):
    from goblueprint import toolchain

    goroot = toolchain.find("1.27").goroot
    code, out, _ = run_cli(capsys, "binary", "crosscheck", str(go_binary("hello", "1.22")), "--goroot", str(goroot),
                           "--json")  # fmt: skip
    assert code == 0
    rec = json.loads(out)
    assert rec["binary_go"].startswith("1.22.") and rec["source_go"].startswith("1.27.")
    structs = {s["struct"]: s for s in rec["structs"]["structs"]}
    # gobuf lost its ret field after 1.22; the 1.22 binary still has it.
    gobuf = structs["gobuf"]
    assert gobuf["status"] == "different"
    assert {"field": "ret", "side": "binary"} in [
        {"field": d["field"], "side": d["side"]} for d in gobuf["differences"]
    ]
    assert all(d["explanation"] for s in structs.values() for d in s.get("differences", []))
    assert rec["structs"]["equal"] < rec["structs"]["total"]
    code, _, err = run_cli(
        capsys, "binary", "crosscheck", str(go_binary("hello")), "--goroot", "/nonexistent"
    )
    line = one_line_error(code, err)
    assert "cannot read /nonexistent: no such file or directory (--goroot names a GOROOT" in line
    # crosscheck has no --go: its hint is to leave --goroot out, not an option it lacks.
    assert "--go " not in line and "leave --goroot out" in line
    code, _, err = run_cli(capsys, "binary", "crosscheck", str(go_binary("hello")), "--goroot", "/tmp")
    line = one_line_error(code, err)
    assert "/tmp is not a GOROOT" in line and "--go " not in line and "leave --goroot out" in line


@pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="no C compiler")
def test_calls_to_an_address_no_symbol_covers(capsys, go_binary):
    # The C code of a cgo binary calls libc through .plt stubs, which have no symbol:
    # the address and its section, in the text and in JSON (the text raised a TypeError).
    path = str(go_binary("cgohello"))
    code, out, err = run_cli(capsys, "binary", "calls", path, "x_cgo_init")
    assert code == 0, err
    assert re.search(r"^  0x[0-9a-f]+  0x[0-9a-f]+ \(in \.plt\) ", out, re.M), out
    code, out, _ = run_cli(capsys, "binary", "calls", path, "x_cgo_init", "--json")
    plt = [c for c in json.loads(out)["calls"] if c["target"] is None and not c["indirect"]]
    assert plt and all(c["target_section"] == ".plt" and c["target_address"] for c in plt)
    code, out, _ = run_cli(capsys, "binary", "disasm", path, "x_cgo_init")
    assert code == 0 and "<.plt>" in out


@pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="no C compiler")
def test_undefined_symbols_are_in_und(capsys, go_binary):
    # readelf's UND: the libc functions a cgo binary imports (the section column was empty).
    path = str(go_binary("cgohello"))
    code, out, _ = run_cli(capsys, "binary", "symbols", path, "--grep", "@GLIBC", "--json")
    rows = json.loads(out)["symbols"]
    assert code == 0 and rows and all(r["section"] == "UND" and r["address"] == 0 for r in rows)


def test_a_type_named_without_its_package_is_suggested(capsys, go_binary):
    # Only runtime. may be left out; other packages' types are named in the hint.
    path = str(go_binary("hello"))
    code, _, err = run_cli(capsys, "binary", "layout", path, "point")
    assert one_line_error(code, err).endswith(f"unknown type 'point' in {path} (did you mean main.point?)")
    code, _, err = run_cli(capsys, "binary", "layout", path, "Mutex")
    assert "did you mean internal/sync.Mutex, sync.Mutex?" in err or "did you mean sync.Mutex?" in err


def test_a_generic_function_is_suggested_by_its_instances(capsys, go_binary):
    # Instances carry their shapes (internal/strconv.shortFloat[go.shape.float64]).
    path = str(go_binary("hello"))
    code, _, err = run_cli(capsys, "binary", "disasm", path, "internal/strconv.shortFloat")
    line = one_line_error(code, err)
    assert (
        "(did you mean internal/strconv.shortFloat[go.shape.float32], internal/strconv.shortFloat[go.shape.float64]?)"
        in line
    )
