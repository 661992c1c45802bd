"""`lab ab`: the same program against a baseline and a changed runtime, runs interleaved.

Both sides are lab builds (same instrumentation, so the records cost the same on
both); only the knobs differ. Each run gives metrics from its records (sysmon's
preemptions and wake-ups, steals) and from its trace (scheduling latency,
migrations, block totals, as `trace metrics` computes them), and its wall time.
The difference of means gets a percentile bootstrap interval (fixed seed, so the
same runs give the same interval) and a permutation test's p-value, which unlike the
interval stays honest with few runs.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from goblueprint.errors import GoblueprintError, LabError
from goblueprint.lab import frame, instrument, records
from goblueprint.lab.observe import observe

METRICS = (
    "preemptions",
    "steals",
    "sysmon_wakeups",
    "sched_latency_p50_ns",
    "sched_latency_p99_ns",
    "migrations",
    "block_ns",
    "wall_ns",
)
BOOTSTRAP = 4000
SEED = 20240101


def run_metrics(out: Path) -> dict[str, float]:
    """The metrics of one lab run folder."""
    from goblueprint.timeline import metrics
    from goblueprint.timeline.analysis import analyse

    table, dump = records.load(out)
    df = frame.records_frame(table, dump)
    counts = dict(df.group_by(pl.col("kind").cast(str)).len().rows())
    steals = df.filter((pl.col("kind") == "steal") & (pl.col("a") > 0)).height
    meta = (out / "meta.json").read_text()
    import json

    wall = float(json.loads(meta)["wall_s"]) * 1e9
    trace = out / "trace.out"
    if not trace.exists():
        raise LabError(f"{out}: the run left no trace to measure")
    a = analyse(str(trace))
    if a.timeline is None:
        raise LabError(f"{out}: the trace could not be analysed")
    m = metrics.compute(a.summary, a.timeline)
    return {
        "preemptions": counts.get("sysmon_preempt", 0),
        "steals": steals,
        "sysmon_wakeups": counts.get("sysmon_wake", 0),
        "sched_latency_p50_ns": m["sched_latency"].get("p50", 0),
        "sched_latency_p99_ns": m["sched_latency"].get("p99", 0),
        "migrations": m["migrations"]["total"],
        "block_ns": sum(g["block_total"] for g in m["groups"]),
        "wall_ns": wall,
    }


def bootstrap_ci(a: list[float], b: list[float], level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(b) - mean(a), resampling each side."""
    rng = np.random.default_rng(SEED)
    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ia = rng.integers(0, len(xa), size=(BOOTSTRAP, len(xa)))
    ib = rng.integers(0, len(xb), size=(BOOTSTRAP, len(xb)))
    diffs = xb[ib].mean(axis=1) - xa[ia].mean(axis=1)
    tail = (1 - level) / 2
    return float(np.quantile(diffs, tail)), float(np.quantile(diffs, 1 - tail))


# Splits of the pooled runs enumerated whole up to this many (5 runs a side: 252), else
# drawn (PERMUTATIONS, seeded like the bootstrap).
EXACT_SPLITS = 20_000
PERMUTATIONS = 20_000


def permutation_p(a: list[float], b: list[float]) -> float:
    """Two-sided p-value of mean(b) - mean(a) by a permutation test: the share of the ways to
    split the pooled runs into sides of the same sizes whose difference of means is at least
    as far from zero as the one observed.  Unlike the bootstrap's interval it holds for few
    runs: 2 runs a side can never give less than 1/3, 3 a side 1/10 (no split of so few runs
    can tell a difference at the 5 % level), and an interval that excludes zero there says
    little."""
    import itertools
    import math

    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    pooled = np.concatenate([xa, xb])
    na, n = len(xa), len(pooled)
    if na == 0 or na == n:
        return 1.0
    observed = abs(xb.mean() - xa.mean())
    total = pooled.sum()
    if math.comb(n, na) <= EXACT_SPLITS:
        sides = np.array(list(itertools.combinations(range(n), na)), dtype=np.int64)
    else:
        rng = np.random.default_rng(SEED)
        sides = rng.permuted(np.tile(np.arange(n), (PERMUTATIONS, 1)), axis=1)[:, :na]
    sum_a = pooled[sides].sum(axis=1)
    diffs = np.abs((total - sum_a) / (n - na) - sum_a / na)
    # (a split's difference equal to the observed one, but for rounding, counts as as far)
    far = int((diffs >= observed - 1e-9 * max(1.0, observed)).sum())
    if len(sides) == math.comb(n, na) and math.comb(n, na) <= EXACT_SPLITS:
        return far / len(sides)
    return (far + 1) / (len(sides) + 1)  # the observed split among the drawn ones


def ab(
    command: list[str],
    out_dir: Path,
    knobs: dict[str, str],
    *,
    runs: int = 5,
    go: str | None = None,
    procs: int | None = None,
    timeout: float | None = None,
    cwd: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    if runs < 2:
        raise LabError("--runs must be at least 2 (a confidence interval needs spread)")
    if not knobs:
        raise LabError("no --knob given: nothing to compare")
    samples: dict[str, dict[str, list[float]]] = {
        "a": {m: [] for m in METRICS},
        "b": {m: [] for m in METRICS},
    }
    for i in range(runs):
        # Interleaved, and the order flips every run, so drift of the machine hits both sides.
        for side in ("a", "b") if i % 2 == 0 else ("b", "a"):
            out = out_dir / f"{side}{i}"
            obs = observe(
                command,
                out,
                go=go,
                procs=procs,
                timeout=timeout,
                cwd=cwd,
                knobs=knobs if side == "b" else None,
                capacity=instrument.DEFAULT_CAPACITY,
                stdout=subprocess.DEVNULL,  # type: ignore[arg-type]
            )
            if not obs.capture.ok:
                raise LabError(f"run {side}{i} failed ({obs.capture.meta['error']}); see {out}")
            try:
                got = run_metrics(out)
            except GoblueprintError as exc:
                raise LabError(f"run {side}{i}: {exc}") from exc
            for name, value in got.items():
                samples[side][name].append(value)
            if progress:
                progress(f"run {side}{i}: " + ", ".join(f"{k} {v:g}" for k, v in sorted(got.items())))
    result: dict[str, Any] = {"knobs": dict(sorted(knobs.items())), "runs": runs, "metrics": {}}
    for name in METRICS:
        a, b = samples["a"][name], samples["b"][name]
        low, high = bootstrap_ci(a, b)
        result["metrics"][name] = {
            "a": float(np.mean(a)),
            "b": float(np.mean(b)),
            "diff": float(np.mean(b) - np.mean(a)),
            "ci": [low, high],
            "p": permutation_p(a, b),
            "a_runs": a,
            "b_runs": b,
        }
    return result
