"""capture runs what `go test PATTERN` / `go run PKG` would run, from any directory.

A tiny module made in a temporary directory: a root package and ./sub with
tests (each test says which package it is in), a package without tests, and a
main package.  Which tests ran is read from the test binary's -v output and
from the trace itself (the test function's frame), never from capture's own
account.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint.capture import capture, capture_all
from goblueprint.trace.events import EventKind
from goblueprint.trace.reader import open_trace

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]

FILES = {
    "go.mod": "module example.com/m\n\ngo 1.22\n",
    "m.go": "package m\n\nfunc F() int { return 1 }\n",
    # Each test sleeps so that the trace holds a stack inside it.
    "m_test.go": 'package m\n\nimport (\n\t"testing"\n\t"time"\n)\n\n'
    'func TestRoot(t *testing.T) { time.Sleep(time.Millisecond); t.Log("ran in root") }\n',
    "sub/sub.go": "package sub\n\nfunc G() int { return 2 }\n",
    "sub/sub_test.go": 'package sub\n\nimport (\n\t"testing"\n\t"time"\n)\n\n'
    'func TestSub(t *testing.T) { time.Sleep(time.Millisecond); t.Log("ran in sub") }\n',
    "notests/n.go": "package notests\n",
    "cmd/srv/main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("srv ran") }\n',
}


@pytest.fixture
def module(tmp_path: Path) -> Path:
    root = tmp_path / "m"
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _test_funcs(trace: Path) -> set[str]:
    """The Test* functions that ran, from the goroutines' start stacks in the trace."""
    found = set()
    for ev in open_trace(trace):
        if ev.kind != EventKind.STATE_TRANSITION:
            continue
        for stack in (ev.stack, ev.state_transition().stack):
            found.update(f.func for f in stack.frames() if ".Test" in f.func)
    return found


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "goblueprint", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_relative_package_is_the_one_traced(module: Path, tmp_path: Path) -> None:
    proc = _cli(["capture", "-o", str(tmp_path / "cap"), "--", "go", "test", "-v", "./sub"], module)
    assert proc.returncode == 0, proc.stderr
    assert "ran in sub" in proc.stdout and "ran in root" not in proc.stdout
    meta = json.loads((tmp_path / "cap" / "meta.json").read_text())
    assert meta["package"] == "example.com/m/sub"
    assert _test_funcs(tmp_path / "cap" / "trace.out") == {"example.com/m/sub.TestSub"}


def test_dot_dot_dot_gives_one_trace_per_package(module: Path, tmp_path: Path, go_accepts: Callable) -> None:
    out = tmp_path / "cap"
    proc = _cli(["capture", "-o", str(out), "--", "go", "test", "-count=1", "./..."], module)
    assert proc.returncode == 0, proc.stderr
    # Packages without tests: go test's own one line, and no folder.
    assert "?   \texample.com/m/notests\t[no test files]" in proc.stdout
    assert "?   \texample.com/m/cmd/srv\t[no test files]" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["example.com_m", "example.com_m_sub"]
    for sub, test in (
        ("example.com_m", "example.com/m.TestRoot"),
        ("example.com_m_sub", "example.com/m/sub.TestSub"),
    ):
        assert _test_funcs(out / sub / "trace.out") == {test}
        assert go_accepts(out / sub / "trace.out").returncode == 0
        assert json.loads((out / sub / "meta.json").read_text())["error"] is None


def test_import_path_from_a_subdirectory_and_outside_the_module(module: Path, tmp_path: Path) -> None:
    # From a subdirectory of the module, the root package by import path.
    results = capture_all(["go", "test", "example.com/m"], tmp_path / "a", cwd=module / "sub", no_stdin=True)
    assert [r.meta["package"] for r in results] == ["example.com/m"]
    assert _test_funcs(results[0].out_dir / "trace.out") == {"example.com/m.TestRoot"}
    # From outside any module, a package by its directory (go test's own rule for paths).
    outside = capture(["go", "test", str(module / "sub")], tmp_path / "b", cwd=module, no_stdin=True)
    assert outside.ok and outside.meta["package"] == "example.com/m/sub"


def test_go_run_by_import_path_and_relative_path(module: Path, tmp_path: Path) -> None:
    for target in ("example.com/m/cmd/srv", "../cmd/srv"):
        out = tmp_path / target.replace("/", "_")
        proc = _cli(["capture", "-o", str(out), "--", "go", "run", target], module / "sub")
        assert proc.returncode == 0, proc.stderr
        assert "srv ran" in proc.stdout
        meta = json.loads((out / "meta.json").read_text())
        assert meta["package"] == "example.com/m/cmd/srv" and meta["trace_via"] == "overlay"


def test_go_run_of_several_packages_is_one_line(module: Path, tmp_path: Path) -> None:
    proc = _cli(["capture", "-o", str(tmp_path / "cap"), "--", "go", "run", "./..."], module)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("goblueprint: error:"), proc.stderr


def test_json_of_several_packages_is_one_list(module: Path, tmp_path: Path) -> None:
    proc = _cli(["capture", "--json", "-o", str(tmp_path / "cap"), "--", "go", "test", "./..."], module)
    assert proc.returncode == 0, proc.stderr
    # The test binaries' own output ("PASS") comes first on stdout; the JSON list ends it.
    metas = json.loads(proc.stdout[proc.stdout.index("\n[\n") + 1 :])
    by_package = {m["package"]: m for m in metas}
    assert sorted(by_package) == [
        "example.com/m",
        "example.com/m/cmd/srv",
        "example.com/m/notests",
        "example.com/m/sub",
    ]
    assert by_package["example.com/m/notests"]["skipped"] == "no test files"
    assert by_package["example.com/m/sub"]["files"]["trace"] == "trace.out"
