"""Fixtures of the lab tests: lab runs of real programs, observed once per session.

Each lab build compiles the runtime with the overlay (tens of seconds), so the
runs are shared: one of the project's sched workload per Go release, and a few
small programs for the failure paths.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
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


def chain_breaks(rows: pl.DataFrame) -> tuple[int, int]:
    """Of ROWS (obj, a: prior status, b: status written; by object, in time order), the
    records whose prior status is not what the one before left and that no swap of two
    neighbours explains, and how many such swaps explain the others.

    Records X, Y written in the order Y, X but clocked X, Y (after P, before N) break the chain
    at X, Y and N; put back (P, Y, X, N), it holds: Y.a = P.b, X.a = Y.b, N.a = X.b."""
    broken = swaps = 0
    for _, one in rows.group_by("obj", maintain_order=True):
        a, b = one["a"].to_list(), one["b"].to_list()
        explained = set()
        for i in range(1, len(a) - 1):
            x, y = i, i + 1  # X, Y (P = i - 1, N = i + 2 when there is one)
            if a[x] == b[x - 1]:
                continue  # X holds: no swap starts here
            n_holds = y + 1 >= len(a) or a[y + 1] == b[x]
            if a[y] == b[x - 1] and a[x] == b[y] and n_holds:
                swaps += 1
                explained |= {x, y, y + 1}
        broken += sum(1 for i in range(1, len(a)) if a[i] != b[i - 1] and i not in explained)
    return broken, swaps
