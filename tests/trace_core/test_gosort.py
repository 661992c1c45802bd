"""Our port of Go's slices.SortFunc leaves equal keys in exactly Go's order."""

from __future__ import annotations

import random
import subprocess

import pytest

from goblueprint import toolchain
from goblueprint.trace.gosort import sort_func

from .conftest import GOPROGS

pytestmark = pytest.mark.slow


def _cases() -> list[list[int]]:
    rng = random.Random(7)
    cases = []
    for n in (0, 1, 5, 12, 13, 20, 49, 50, 51, 100, 257, 1000, 5000):
        cases.append([rng.randrange(max(n // 4, 1)) for _ in range(n)])  # many ties
        cases.append(sorted(rng.randrange(10) for _ in range(n)))  # sorted with ties
        cases.append(sorted((rng.randrange(10) for _ in range(n)), reverse=True))
        cases.append([3] * n)
        cases.append([rng.randrange(1 << 40) for _ in range(n)])
    # Nearly sorted input (partial insertion sort path) and organ pipes (bad pivots).
    base = list(range(300))
    base[10], base[200] = base[200], base[10]
    cases.append(base)
    cases.append(list(range(500)) + list(range(500, 0, -1)))
    return cases


def test_sort_func_matches_go(tmp_path):
    tc = toolchain.find("1.27")
    exe = tmp_path / "gosort"
    tc.run(["build", "-o", str(exe), "."], cwd=GOPROGS / "gosort")
    cases = _cases()
    stdin = "".join(" ".join(map(str, c)) + "\n" for c in cases)
    proc = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True, timeout=300)
    lines = proc.stdout.split("\n")
    for case, line in zip(cases, lines, strict=False):
        items = list(enumerate(case))
        sort_func(items, key=lambda it: it[1])
        assert [i for i, _ in items] == [int(x) for x in line.split()], f"n={len(case)}"
    assert len(lines) == len(cases) + 1
