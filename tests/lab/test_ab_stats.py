"""The A/B statistics of `lab ab` and `simulate ab`: the permutation test beside the bootstrap."""

from __future__ import annotations

import math

import pytest

from goblueprint.cli._ab_table import print_ab_table
from goblueprint.lab.ab import bootstrap_ci, permutation_p


def test_exact_permutation_p_of_few_runs():
    # Every high run on one side: 2 of the C(2n, n) splits are as far (either side high).
    assert permutation_p([1, 2], [3, 4]) == pytest.approx(2 / 6)
    assert permutation_p([1, 2, 3], [4, 5, 6]) == pytest.approx(2 / 20)
    assert permutation_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)
    assert permutation_p([5, 1, 3], [3, 5, 1]) == 1.0  # the same runs: every split as far
    # Sides of unequal sizes: 1 run against 3, the one far above: 1 of the 4 splits puts it alone.
    assert permutation_p([1, 1, 1], [9]) == pytest.approx(1 / 4)


def test_drawn_permutation_p_of_many_runs_is_seeded():
    a, b = [float(x) for x in range(30)], [x + 100.0 for x in range(30)]
    assert math.comb(60, 30) > 20_000  # drawn, not enumerated
    p = permutation_p(a, b)
    assert p == permutation_p(a, b)  # the same runs, the same p
    assert 0 < p < 0.001  # only the observed split is as far
    assert permutation_p(a, [x + 0.5 for x in a]) > 0.5  # a shift well inside the spread


def test_few_runs_get_no_star_whatever_their_interval(capsys):
    # 2 runs a side, every b above every a: the bootstrap's interval excludes zero, yet a
    # split of 4 runs cannot tell a difference: no star, and a note says why.
    a, b = [10.0, 11.0], [20.0, 21.0]
    low, high = bootstrap_ci(a, b)
    assert low > 0
    metric = {"a": 10.5, "b": 20.5, "diff": 10.0, "ci": [low, high], "p": permutation_p(a, b)}
    print_ab_table({"steals": metric}, 2)
    out = capsys.readouterr().out
    assert "*" not in out and "no difference can reach p < 0.05" in out
    # 5 runs a side, all apart: both call it a difference.
    a5, b5 = [10.0, 11, 12, 13, 14], [20.0, 21, 22, 23, 24]
    low, high = bootstrap_ci(a5, b5)
    print_ab_table(
        {"steals": {"a": 12.0, "b": 22.0, "diff": 10.0, "ci": [low, high], "p": permutation_p(a5, b5)}}, 5
    )
    out = capsys.readouterr().out
    assert out.rstrip().endswith("*") and "note" not in out
