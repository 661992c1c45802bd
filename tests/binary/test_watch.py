"""binary watch on a live process (gdb/MI): the records must follow the
scheduler's own invariants, which only hold if our DWARF offsets are right."""

from __future__ import annotations

import json

import pytest

from goblueprint.binary.session import open_all
from goblueprint.cli import main

from .conftest import have_gdb

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_gdb(), reason="gdb not installed (apt-get install gdb)"),
]


@pytest.mark.parametrize("go", ["1.27", "1.22"])
def test_watch_follows_curg_through_execute_and_gogo(capsys, go_binary, go):
    path = str(go_binary("hello", go))
    code = main(["binary", "watch", path, "--at", "runtime.execute", "--at", "runtime.gogo.abi0",
                 "--count", "16", "--json", "--", "4"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    recs = [json.loads(line) for line in out.splitlines()]
    assert len(recs) == 16
    syms = open_all(path, warn=False).symbols
    entry = {name: syms.function(name).lo for name in ("runtime.execute", "runtime.gogo.abi0")}
    last_switch: dict[int, int] = {}
    matched = 0
    for r in recs:
        assert r["rip"] == entry[r["function"]]
        assert r["g"]["goid"] == 0, "scheduler code runs on g0"
        assert r["lwp"] > 0 and r["m"] >= 0
        if r["function"] == "runtime.execute":
            assert r["switch_to"]["goid"] >= 1
            assert r["switch_to"]["status"] == "runnable"
            last_switch[r["lwp"]] = r["switch_to"]["goid"]
        else:
            # execute set m.curg and made it running before jumping to gogo.
            assert r["curg"] is not None and r["curg"]["status"] == "running"
            if r["lwp"] in last_switch:
                assert r["curg"]["goid"] == last_switch[r["lwp"]]
                matched += 1
    assert matched >= 3


def test_watch_text_table_and_bad_options(capsys, go_binary):
    path = str(go_binary("hello"))
    assert main(["binary", "watch", path, "--count", "2"]) == 0
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["HIT", "FUNCTION", "THR"] and len(lines) == 3
    assert all("runtime.execute" in ln and "/runnable" in ln for ln in lines[1:])
    assert main(["binary", "watch", path, "--count", "0"]) == 1
    assert main(["binary", "watch", path, "--at", "runtime.nosuch", "--count", "1"]) == 1
    _, err = capsys.readouterr()
    assert "no function 'runtime.nosuch'" in err


@pytest.mark.parametrize("go", ["1.27", "1.22"])
def test_watch_a_position_independent_binary(capsys, go_binary, go):
    # A PIE runs at a load bias from its link addresses: breakpoints at the link
    # addresses could not be inserted (gdb aborted the run; watch waited for a hit).
    path = str(go_binary("hello", go, buildmode="pie"))
    code = main(["binary", "watch", path, "--at", "runtime.execute", "--at", "runtime.gogo.abi0",
                 "--count", "8", "--timeout", "20", "--json", "--", "4"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    recs = [json.loads(line) for line in out.splitlines()]
    assert len(recs) == 8
    syms = open_all(path, warn=False).symbols
    entry = {name: syms.function(name).lo for name in ("runtime.execute", "runtime.gogo.abi0")}
    biases = {r["rip"] - entry[r["function"]] for r in recs}
    assert len(biases) == 1 and biases.pop() % 4096 == 0
    assert {r["function"] for r in recs} == set(entry)
    for r in recs:
        assert r["g"]["goid"] == 0
        if r["function"] == "runtime.execute":
            assert r["switch_to"]["status"] == "runnable"
        else:
            assert r["curg"]["status"] == "running"


def test_watch_a_binary_of_another_architecture_is_one_line(capsys, go_binary):
    # gdb would start something else in its place (stopping in that program's loader,
    # where no breakpoint of ours fits): refused before gdb starts, and before any output.
    import platform

    foreign = "arm64" if platform.machine() in ("x86_64", "amd64") else "amd64"
    path = str(go_binary("hello", arch=foreign))
    assert main(["binary", "watch", path, "--count", "2", "--timeout", "20"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert (
        err.strip()
        == f"goblueprint: error: {path}: an {foreign} binary does not run on this "
        + ("amd64" if foreign == "arm64" else "arm64")
        + " machine"
    )


def test_watch_says_when_the_program_ends_before_the_count(capsys, go_binary):
    path = str(go_binary("hello"))
    assert main(["binary", "watch", path, "--count", "100000", "--json", "--", "2"]) == 0
    out, err = capsys.readouterr()
    hits = len(out.splitlines())
    assert 0 < hits < 100000
    assert err.strip() == f"goblueprint: note: the program exited with status 0 after {hits} of 100000 hits"
