"""The test binary's command line: go test's own additions, and --timeout as -test.timeout."""

from __future__ import annotations

from pathlib import Path

from goblueprint.capture.command import plan_command
from goblueprint.capture.run import _test_args

TRACE = Path("/out/trace.out")
HERE = Path("/work/dir")


def _args(*command: str, timeout: float | None = None) -> list[str]:
    return _test_args(plan_command(["go", "test", *command]), TRACE, timeout, HERE)


def test_as_go_test_runs_it() -> None:
    # go test always passes -test.paniconexit0 and, unless told otherwise, -test.timeout=10m0s.
    assert _args("-run", "X", "./pkg") == [
        "-test.trace=/out/trace.out", "-test.paniconexit0", "-test.timeout=10m0s", "-test.run=X",
    ]  # fmt: skip


def test_capture_timeout_becomes_the_test_timeout_unless_the_users_is_shorter() -> None:
    assert "-test.timeout=3.0s" in _args("./pkg", timeout=3.0)
    assert "-test.timeout=3.0s" in _args("-timeout", "1m", "./pkg", timeout=3.0)
    assert _args("-timeout", "2s", "./pkg", timeout=3.0).count("-test.timeout=2s") == 1
    assert "-test.timeout=3.0s" in _args("-timeout", "0", "./pkg", timeout=3.0)  # 0: no limit of its own
    assert [a for a in _args("-timeout", "90s", "./pkg") if "timeout" in a] == ["-test.timeout=90s"]


def test_profiles_land_where_go_test_would_put_them() -> None:
    assert "-test.outputdir=/work/dir" in _args("-cpuprofile", "cpu.out", "./pkg")
    assert not any("outputdir" in a for a in _args("./pkg"))
    assert _args("-cpuprofile", "c", "-outputdir", "/x", "./pkg").count("-test.outputdir=/x") == 1
