"""The page's counter thinning (render.page_counters) against the rule it states, computed with polars."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from goblueprint.render import page_counters
from goblueprint.render.page_counters import KEPT_WHOLE, thin_counters
from goblueprint.timeline import batches
from goblueprint.timeline.model import COUNTERS_SCHEMA


def expected(df: pl.DataFrame, origin: int, duration: int) -> pl.DataFrame:
    """Counters with at most KEPT_WHOLE samples whole; the others per bucket: the largest value
    (NaN only if all are) at the bucket's first time, and the value of its last row at its
    last time if later.  Sorted by name, time, row."""
    width = max(1, -(-duration // page_counters.COUNTER_BUCKETS))
    rows = df.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))
    n = pl.len().over("name")
    whole = rows.filter(n <= KEPT_WHOLE)
    buckets = (
        rows.filter(n > KEPT_WHOLE)
        .with_columns(((pl.col("time") - origin) // width).alias("bucket"))
        .group_by("name", "bucket")
        .agg(
            pl.col("time").min().alias("t_first"),
            pl.col("value").max().alias("v_max"),  # (polars' max ignores NaN)
            pl.col("row").min().alias("i_first"),
            pl.col("time").max().alias("t_last"),
            pl.col("value").sort_by("row").last().alias("v_last"),
            pl.col("row").max().alias("i_last"),
        )
    )
    first = buckets.select("name", time="t_first", value="v_max", row="i_first")
    last = buckets.filter(pl.col("t_last") > pl.col("t_first")).select(
        "name", time="t_last", value="v_last", row="i_last"
    )
    got = pl.concat([whole.select("name", "time", "value", "row"), first, last])
    return got.sort("name", "time", "row").select("name", "time", "value").cast(COUNTERS_SCHEMA)


def counters(seed: int, n: int, sorted_times: bool) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    # Name 7 passes the bound, 3 does not; 40 passes it only in the table's last rows.
    names = rng.choice(np.array([7, 7, 7, 3], np.uint32), n)
    names[-KEPT_WHOLE - 2 :] = 40
    times = rng.integers(-5_000, 2_100_000, n)  # some before the origin, some past the end
    values = rng.integers(0, 50, n).astype(np.float64)
    values[rng.random(n) < 0.05] = np.nan
    values[np.flatnonzero(names == 7)[:50]] = np.nan  # a bucket whose values are all NaN
    return pl.DataFrame(
        {"name": names, "time": np.sort(times) if sorted_times else times, "value": values},
        schema=COUNTERS_SCHEMA,
    )


@pytest.mark.parametrize("sorted_times", [True, False])
def test_thinned_counters_follow_the_rule_in_memory_and_a_batch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sorted_times: bool
) -> None:
    df = counters(1, 4 * KEPT_WHOLE, sorted_times)
    want = expected(df, 0, 2_000_000)
    assert want.height < df.height and (want["name"] == 40).any() and (want["name"] == 3).sum() < KEPT_WHOLE
    assert thin_counters(df, 0, 2_000_000).equals(want)
    path = tmp_path / "counters.parquet"
    df.write_parquet(path, row_group_size=3_000)
    # Batches smaller than a counter's bound: counters pass it in a later batch than their first.
    monkeypatch.setattr(batches, "BATCH_ROWS", 5_000)
    assert thin_counters(pl.scan_parquet(path), 0, 2_000_000).equals(want)


def test_no_counters() -> None:
    empty = pl.DataFrame(schema=COUNTERS_SCHEMA)
    assert thin_counters(empty, 0, 1_000).equals(empty)
    assert thin_counters(empty.lazy(), 0, 1_000).equals(empty)
