"""capture builds the user's program as their own `go build` would, and leaves their tree as it was.

Small modules made in a temporary directory: a cgo main package, a package whose only
Go files are tests, a module whose go.mod lacks a requirement (`go build` refuses it;
a build with -mod=mod would rewrite go.mod), and a module whose dependency exists only
in vendor/.  Every file under the tree is compared before and after.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from goblueprint.capture import capture
from goblueprint.errors import CaptureError

pytestmark = pytest.mark.slow


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file()
    }


DEP = {
    "go.mod": "module example.com/dep\n\ngo 1.22\n",
    "dep.go": "package dep\n\nfunc Twice(x int) int { return 2 * x }\n",
}
USES_DEP = 'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/dep"\n)\n\nfunc main() { fmt.Println("dep says", dep.Twice(21)) }\n'


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler (apt-get install gcc)")
def test_a_cgo_main_package(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    # Its files are CgoFiles to go list, and cgo is on where a C compiler is, as for go build.
    root = tmp_path / "c"
    _write(root, {
        "go.mod": "module example.com/c\n\ngo 1.22\n",
        "main.go": 'package main\n\n/*\nstatic int add(int a, int b) { return a + b; }\n*/\nimport "C"\n\n'
                   'import "fmt"\n\nfunc main() { fmt.Println("cgo says", int(C.add(40, 2))) }\n',
    })  # fmt: skip
    before = _tree(root)
    result = capture(["go", "run", "."], tmp_path / "cap", cwd=root, no_stdin=True)
    assert result.ok, result.meta["error"]
    assert "cgo says 42" in capfd.readouterr().out
    assert (tmp_path / "cap" / "trace.out").stat().st_size > 1000
    assert _tree(root) == before


def test_a_package_of_test_files_only(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _write(root, {
        "go.mod": "module example.com/t\n\ngo 1.22\n",
        "only/only_test.go": 'package only\n\nimport "testing"\n\nfunc TestOnly(t *testing.T) {}\n',
    })  # fmt: skip
    before = _tree(root)
    result = capture(["go", "test", "./only"], tmp_path / "cap", cwd=root, no_stdin=True)
    assert result.ok and result.meta["package"] == "example.com/t/only", result.meta["error"]
    assert _tree(root) == before


def test_go_mod_is_never_rewritten(tmp_path: Path) -> None:
    # go build refuses a replaced module that is not required; -mod=mod would add the requirement.
    _write(tmp_path / "dep", DEP)
    root = tmp_path / "m"
    _write(root, {"go.mod": "module example.com/m\n\ngo 1.22\n\nreplace example.com/dep => ../dep\n",
                  "main.go": USES_DEP})  # fmt: skip
    before = _tree(root)
    with pytest.raises(CaptureError, match="replaced but not required"):
        capture(["go", "run", "."], tmp_path / "cap", cwd=root, no_stdin=True)
    assert _tree(root) == before


def test_a_dependency_only_in_vendor(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "v"
    _write(root, {
        "go.mod": "module example.com/v\n\ngo 1.22\n\nrequire example.com/dep v0.1.0\n",
        "main.go": USES_DEP,
        "vendor/modules.txt": "# example.com/dep v0.1.0\n## explicit\nexample.com/dep\n",
        "vendor/example.com/dep/dep.go": DEP["dep.go"],
    })  # fmt: skip
    before = _tree(root)
    result = capture(["go", "run", "."], tmp_path / "cap", cwd=root, no_stdin=True)
    assert result.ok, result.meta["error"]
    assert "dep says 42" in capfd.readouterr().out
    assert _tree(root) == before


@pytest.mark.parametrize("go", ["1.22", "1.27"])
def test_a_main_package_declaring_the_names_capture_imports(tmp_path: Path, go: str) -> None:
    # Package main and the added file share one namespace: a program's own `trace` (a
    # -trace flag), `signal`, `sync` or `syscall` clashed with the file's imports.
    root = tmp_path / "n"
    _write(root, {
        "go.mod": "module example.com/n\n\ngo 1.22\n",
        "main.go": 'package main\n\nimport (\n\t"flag"\n\t"fmt"\n)\n\n'
                   'var trace = flag.Bool("trace", false, "trace")\n\n'
                   "func signal(s string) { fmt.Println(s) }\n\n"
                   "type sync struct{}\n\nconst syscall, os = 1, 2\n\n"
                   'func main() {\n\tflag.Parse()\n\tsignal(fmt.Sprint(*trace, syscall, os))\n}\n',
    })  # fmt: skip
    result = capture(["go", "run", ".", "-trace"], tmp_path / "cap", cwd=root, go=go, no_stdin=True)
    assert result.ok and result.meta["trace_via"] == "overlay", result.meta["error"]
    assert (tmp_path / "cap" / "trace.out").stat().st_size > 500


def test_scheduler_lines_landing_inside_the_programs_lines(tmp_path: Path) -> None:
    # A program writing a line in pieces (a buffered writer flushing mid-line): the runtime's
    # SCHED lines land after a piece. They go to the log; the program's line stays whole, and
    # a line of its own that merely starts like the runtime's stays the program's.
    import io

    from goblueprint.capture import schedtrace

    root = tmp_path / "p"
    _write(root, {
        "go.mod": "module example.com/p\n\ngo 1.22\n",
        "main.go": 'package main\n\nimport (\n\t"os"\n\t"time"\n)\n\n'
                   "func main() {\n"
                   '\tos.Stderr.WriteString("SCHED 5ms: the program\'s own line\\n")\n'
                   '\tos.Stderr.WriteString("first half, ")\n'
                   "\ttime.Sleep(300 * time.Millisecond)\n"
                   '\tos.Stderr.WriteString("second half\\n")\n}\n',
    })  # fmt: skip
    err = io.BytesIO()
    result = capture(
        ["go", "run", "."], tmp_path / "cap", cwd=root, schedtrace_ms=20, stderr=err, no_stdin=True
    )
    assert result.ok, result.meta["error"]
    assert err.getvalue().decode().splitlines() == [
        "SCHED 5ms: the program's own line",
        "first half, second half",
    ]
    samples = schedtrace.parse((tmp_path / "cap" / "schedtrace.log").read_text()).samples
    assert len(samples) >= 5  # 300 ms at 20 ms, on a loaded machine too


def test_go_dash_c_changes_directory_first(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    # go takes -C DIR only as the first flag; capture passed it on to go build after others.
    root = tmp_path / "m"
    _write(root, {
        "go.mod": "module example.com/m\n\ngo 1.22\n",
        "main.go": 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\n'
                   'func main() { wd, _ := os.Getwd(); fmt.Println("ran in", wd) }\n',
        "m_test.go": 'package main\n\nimport "testing"\n\nfunc TestM(t *testing.T) {}\n',
    })  # fmt: skip
    result = capture(["go", "run", "-C", "m", "."], tmp_path / "run", cwd=tmp_path, no_stdin=True)
    assert result.ok and result.meta["package"] == "example.com/m", result.meta["error"]
    assert f"ran in {root.resolve()}" in capfd.readouterr().out  # where go run -C runs it
    result = capture(["go", "test", "-C=m", "."], tmp_path / "test", cwd=tmp_path, no_stdin=True)
    assert result.ok and result.meta["package"] == "example.com/m", result.meta["error"]
    assert result.meta["command"] == ["go", "test", "-C=m", "."]


def test_a_package_that_does_not_build_among_several(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As go test ./...: FAIL pkg [build failed], and the other packages still recorded.
    from goblueprint.capture import capture_all
    from goblueprint.cli import main

    root = tmp_path / "mm"
    _write(root, {
        "go.mod": "module example.com/mm\n\ngo 1.22\n",
        "b/b_test.go": 'package b\n\nimport "testing"\n\nfunc TestB(t *testing.T) { undefined() }\n',
        "c/c_test.go": 'package c\n\nimport "testing"\n\nfunc TestC(t *testing.T) {}\n',
    })  # fmt: skip
    results = capture_all(["go", "test", "./..."], tmp_path / "cap", cwd=root, no_stdin=True)
    by_package = {r.meta["package"]: r for r in results}
    assert by_package["example.com/mm/b"].skipped == "build failed"
    assert "undefined: undefined" in by_package["example.com/mm/b"].meta["error"]
    assert by_package["example.com/mm/c"].ok and by_package["example.com/mm/c"].trace is not None
    import os

    cwd = os.getcwd()
    os.chdir(root)
    try:
        code = main(["capture", "-o", str(tmp_path / "cli"), "--", "go", "test", "./..."])
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    assert code == 1 and "FAIL\texample.com/mm/b [build failed]" in out
    assert "(package example.com/mm/c)" in out and "undefined: undefined" in err
