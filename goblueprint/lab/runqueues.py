"""Run-queue views of the records: steals (thief, victim, how many) and queue lengths per P."""

from __future__ import annotations

from typing import Any

import polars as pl


def steals(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Every steal that took goroutines: {"t", "thief", "victim", "count", "runnext", "victim_queue"}.

    runqsteal records its result after runqgrab returns (thief, victim, count). When
    runqgrab took from the victim's queue it recorded, just before returning, the count
    and the queue length it computed it from, on the same M with nothing between: the
    pair is joined by M. A steal without that grab record took the victim's runnext
    (runqgrab's other successful return); victim_queue is then 0.
    """
    pairs = (
        frame.filter(pl.col("kind").is_in(["runq_grab", "steal"]))
        .sort(["m", "t"], maintain_order=True)
        .with_columns(
            pl.col("kind").shift(1).over("m").alias("prev_kind"),
            pl.col("obj").shift(1).over("m").alias("prev_victim"),
            pl.col("a").shift(1).over("m").alias("prev_count"),
            pl.col("b").shift(1).over("m").alias("queue_at_grab"),
        )
        .filter((pl.col("kind") == "steal") & (pl.col("a") > 0))
        .with_columns(
            (
                (pl.col("prev_kind") == "runq_grab")
                & (pl.col("prev_victim") == pl.col("obj"))
                & (pl.col("prev_count") == pl.col("a"))
            )
            .fill_null(False)
            .alias("from_queue")
        )
        .sort("t", maintain_order=True)
    )
    return [
        {
            "t": int(t),
            "thief": int(thief),
            "victim": int(victim),
            "count": int(count),
            "runnext": not from_queue,
            "victim_queue": int(queue) if from_queue else 0,
        }
        for t, thief, victim, count, from_queue, queue in zip(
            pairs["t"], pairs["c"], pairs["obj"], pairs["a"], pairs["from_queue"], pairs["queue_at_grab"],
            strict=True,
        )
    ]  # fmt: skip


def queue_lengths(frame: pl.DataFrame) -> pl.DataFrame:
    """(t, p, length) of each P's local run queue, at every record that reads it."""
    put_get = frame.filter(pl.col("kind").is_in(["runq_put", "runq_get"])).select(
        "t", pl.col("obj").cast(pl.Int64).alias("p"), pl.col("c").cast(pl.Int64).alias("length")
    )
    victims = frame.filter((pl.col("kind") == "steal") & (pl.col("a") > 0)).select(
        "t", pl.col("obj").cast(pl.Int64).alias("p"), pl.col("b").cast(pl.Int64).alias("length")
    )
    return pl.concat([put_get, victims]).sort(["t", "p"], maintain_order=True)


def queue_summary(lengths: pl.DataFrame) -> list[dict[str, Any]]:
    out = lengths.group_by("p").agg(
        pl.len().alias("samples"), pl.col("length").max().alias("max"), pl.col("length").mean().alias("mean")
    )
    return [
        {"p": int(p), "samples": int(n), "max": int(mx), "mean": round(float(mean), 3)}
        for p, n, mx, mean in out.sort("p").iter_rows()
    ]
