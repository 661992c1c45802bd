"""Fixtures of the lab tests: lab runs of real programs, observed once per session.

Each lab build compiles the runtime with the overlay (tens of seconds), so the
runs are shared: one of the project's sched workload per Go release, and a few
small programs for the failure paths.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint import toolchain

HERE = Path(__file__).resolve().parent
LAB_GOPROGS = HERE / "goprogs"
GOPROGS = HERE.parent / "goprogs"
RELEASES = ("1.27", "1.22")


@pytest.fixture(scope="session")
def lab_run(
    tmp_path_factory: pytest.TempPathFactory, go_toolchain: Callable[[str], toolchain.Toolchain]
) -> Callable[..., Path]:
    """lab_run(prog, go, **observe options) -> the output folder, made once per arguments."""
    from goblueprint.lab.observe import observe

    done: dict[tuple, Path] = {}

    def run(prog: str, go: str = "1.27", **options: object) -> Path:
        key = (prog, go, tuple(sorted(options.items())))
        if key not in done:
            go_toolchain(go)
            root = LAB_GOPROGS if (LAB_GOPROGS / prog).is_dir() else GOPROGS
            out = tmp_path_factory.mktemp(f"lab-{prog}-{go}")
            observe(["."], out, go=go, cwd=root / prog, **options)  # type: ignore[arg-type]
            done[key] = out
        return done[key]

    return run


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    from goblueprint.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run
