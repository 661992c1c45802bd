"""The A/B table of `lab ab` and `simulate ab`: each metric's means, difference and interval."""

from __future__ import annotations

from typing import Any

# The level a difference is called one at (the interval's is 95 %).
ALPHA = 0.05


def print_ab_table(metrics: dict[str, dict[str, Any]], runs: int) -> None:
    """One row per metric: the means, their difference, its bootstrap interval and the
    permutation test's p; a `*` marks a difference both call one (an interval that excludes
    zero and p < ALPHA): with few runs (RUNS a side) the bootstrap's interval is narrower
    than the runs warrant, and the p says so."""
    print(f"{'metric':<22} {'a':>14} {'b':>14} {'b-a':>14}  {'p':>6}  95% CI")
    for name, m in metrics.items():
        low, high = m["ci"]
        p = m["p"]
        mark = "  *" if not low <= 0 <= high and p < ALPHA else ""
        print(
            f"{name:<22} {m['a']:>14.6g} {m['b']:>14.6g} {m['diff']:>14.6g}  {p:>6.3g}  [{low:.6g}, {high:.6g}]{mark}"
        )
    if _least_p(runs) >= ALPHA:
        print(f"note: with {runs} runs a side no difference can reach p < {ALPHA:g} (the least is "
              f"{_least_p(runs):.3g}); give more runs")  # fmt: skip


def _least_p(runs: int) -> float:
    """The least two-sided permutation p of RUNS against RUNS runs: the two splits that put
    every high run on one side."""
    import math

    return 2 / math.comb(2 * runs, runs)
