"""The A/B table of `lab ab` and `simulate ab`: each metric's means, difference and interval."""

from __future__ import annotations

from typing import Any


def print_ab_table(metrics: dict[str, dict[str, Any]]) -> None:
    """One row per metric; a `*` marks an interval that excludes zero."""
    print(f"{'metric':<22} {'a':>14} {'b':>14} {'b-a':>14}  95% CI")
    for name, m in metrics.items():
        low, high = m["ci"]
        mark = "" if low <= 0 <= high else "  *"
        print(f"{name:<22} {m['a']:>14.6g} {m['b']:>14.6g} {m['diff']:>14.6g}  [{low:.6g}, {high:.6g}]{mark}")
