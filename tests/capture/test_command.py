"""Splitting go run / go test command lines into the build and the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from goblueprint.capture.command import TEST_BOOL_FLAGS, TEST_VALUE_FLAGS, plan_command
from goblueprint.errors import CaptureError


def test_go_run_build_flags_then_package_then_program_args() -> None:
    plan = plan_command(["go", "run", "-race", "-tags", "x y", "-ldflags=-s", "./cmd/a", "-v", "in.txt"])
    assert plan.kind == "run"
    assert plan.build_flags == ["-race", "-tags", "x y", "-ldflags=-s"]
    assert plan.target == ["./cmd/a"]
    assert plan.program_args == ["-v", "in.txt"]


def test_go_run_files() -> None:
    plan = plan_command(["go", "run", "a.go", "b.go", "arg.go.txt"])
    assert plan.target == ["a.go", "b.go"] and plan.program_args == ["arg.go.txt"]


@pytest.mark.parametrize("flag", sorted(TEST_VALUE_FLAGS - {"trace"}))
def test_go_test_value_flags_become_test_flags(flag: str) -> None:
    for form in ([f"-{flag}", "V"], [f"-{flag}=V"], [f"--{flag}", "V"]):
        plan = plan_command(["go", "test", *form, "./pkg"])
        assert plan.program_args == [f"-test.{flag}=V"]
        # (-coverprofile also builds with coverage, as go test does: see below)
        assert plan.target == ["./pkg"] and plan.build_flags == (["-cover"] if flag == "coverprofile" else [])


@pytest.mark.parametrize("flag", sorted(TEST_BOOL_FLAGS))
def test_go_test_bool_flags_become_test_flags(flag: str) -> None:
    plan = plan_command(["go", "test", "./pkg", f"-{flag}"])
    assert plan.program_args == [f"-test.{flag}"]


def test_go_test_build_flags_args_and_default_package() -> None:
    plan = plan_command(["go", "test", "-race", "-count", "1", "-args", "-custom", "x"])
    assert plan.kind == "test" and plan.target == ["."]
    assert plan.build_flags == ["-race"]
    assert plan.program_args == ["-test.count=1", "-custom", "x"]


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["go", "test", "-c"], "-c is not supported"),
        (["go", "test", "-trace", "x"], "-trace is not supported"),
        (["go", "run"], "no package"),
        (["go", "run", "-bogus", "."], "unknown flag -bogus"),
        (["go", "build", "."], "capture takes go test"),
        (["go"], "which command"),
        (["no-such-command-here"], "unknown command 'no-such-command-here'"),
        ([], "no command"),
    ],
)
def test_bad_commands_are_one_clear_error(command: list[str], message: str) -> None:
    with pytest.raises(CaptureError, match=message):
        plan_command(command)


def test_directory_file_and_binary(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    assert plan_command(["pkg", "a"], tmp_path).kind == "package"
    exe = tmp_path / "prog"
    exe.write_text("#!/bin/sh\n")
    with pytest.raises(CaptureError, match="not executable"):
        plan_command(["prog"], tmp_path)
    exe.chmod(0o755)
    plan = plan_command(["prog", "x"], tmp_path)
    assert plan.kind == "binary" and plan.binary == exe and plan.program_args == ["x"]


def test_binary_found_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = tmp_path / "bin" / "mytool"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(exe.parent))
    plan = plan_command(["mytool", "-x"], tmp_path / "elsewhere")
    assert plan.kind == "binary" and plan.binary == exe and plan.program_args == ["-x"]


def test_go_test_vet_flag_is_dropped() -> None:
    for form in (["-vet=off"], ["-vet", "off"]):
        plan = plan_command(["go", "test", *form, "-v", "./pkg"])
        assert plan.program_args == ["-test.v"] and plan.build_flags == [] and plan.target == ["./pkg"]


def test_go_test_takes_several_patterns_as_go_test_does() -> None:
    plan = plan_command(["go", "test", "-run", "X", "./a", "net/http", "./...", "-count=1"])
    assert plan.target == ["./a", "net/http", "./..."]
    assert plan.program_args == ["-test.run=X", "-test.count=1"]


def test_coverprofile_builds_with_coverage() -> None:
    # go test's -coverprofile sets -cover: without it the test binary refuses the flag
    # ("test binary was not built with coverage enabled").
    plan = plan_command(["go", "test", "-coverprofile", "c.out", "./pkg"])
    assert plan.build_flags == ["-cover"] and plan.program_args == ["-test.coverprofile=c.out"]
    plan = plan_command(["go", "test", "-cover", "-coverprofile=c.out", "./pkg"])
    assert plan.build_flags == ["-cover"]
    assert plan_command(["go", "test", "./pkg"]).build_flags == []
