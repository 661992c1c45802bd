"""capture of a test binary built beforehand (go test -c): it records itself through
-test.trace, as under go test, Go 1.22 (which inlines testing.MainStart) and 1.27,
stripped or not; a program that is not a test binary runs as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from goblueprint import toolchain
from goblueprint.capture import capture
from goblueprint.trace.reader import open_trace

pytestmark = pytest.mark.slow

FILES = {
    "go.mod": "module example.com/tb\n\ngo 1.22\n",
    "tb.go": "package tb\n\nfunc Twice(x int) int { return 2 * x }\n",
    "tb_test.go": 'package tb\n\nimport (\n\t"testing"\n\t"time"\n)\n\n'
    "func TestTwice(t *testing.T) {\n\ttime.Sleep(time.Millisecond)\n\tif Twice(2) != 4 {\n\t\tt.Fatal()\n\t}\n}\n",
}


@pytest.mark.parametrize(("go", "ldflags"), [("1.22", ""), ("1.27", ""), ("1.27", "-s -w")])
def test_a_test_binary_records_itself(tmp_path: Path, go: str, ldflags: str) -> None:
    src = tmp_path / "tb"
    for name, text in FILES.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    exe = tmp_path / "tb.test"
    flags = [f"-ldflags={ldflags}"] if ldflags else []
    toolchain.find(go).run(["test", "-c", "-o", str(exe), *flags, "."], cwd=src)
    result = capture([str(exe), "-test.run", "TestTwice"], tmp_path / "cap", cwd=tmp_path, no_stdin=True)
    assert result.ok, result.meta["error"]
    assert result.meta["trace_via"] == "test-flag"
    trace = tmp_path / "cap" / "trace.out"
    funcs = {f.func for ev in open_trace(trace) if ev.stack is not None for f in ev.stack.frames()}
    assert "example.com/tb.TestTwice" in funcs


def test_another_binary_runs_as_it_is(tmp_path: Path) -> None:
    src = tmp_path / "p"
    src.mkdir()
    (src / "go.mod").write_text("module example.com/p\n\ngo 1.22\n")
    (src / "main.go").write_text(
        'package main\n\nimport "testing"\n\nfunc main() { println(testing.Short()) }\n'
    )
    exe = tmp_path / "p.bin"
    toolchain.find("1.27").run(["build", "-o", str(exe), "."], cwd=src)
    result = capture([str(exe)], tmp_path / "cap", cwd=tmp_path, no_stdin=True)
    assert result.meta["trace_via"] == "env"
    assert not result.ok and "no trace was written" in result.meta["error"]


def test_go_test_list_says_why_no_trace_was_written(tmp_path: Path) -> None:
    # go test -list lists and returns before the testing package starts the trace: the
    # failure says so rather than leave "no trace was written" to be puzzled over.
    src = tmp_path / "tb"
    for name, text in FILES.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    result = capture(["go", "test", "-list", "."], tmp_path / "cap", cwd=src, no_stdin=True)
    assert not result.ok
    assert "with -list the testing package lists the tests, runs none" in result.meta["error"]
