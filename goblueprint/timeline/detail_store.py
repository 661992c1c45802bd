"""The levels of detail of an ingested trace, stored once, and tiles read from them on demand.

``goblueprint trace view`` answers "these lanes, this time window, this level" without
holding the trace: the levels (timeline.detail) are computed once from the ingested spans
table a chunk of lanes at a time and written as one Parquet file per level, sorted like
the spans table (lane_kind, lane_id, b0) with small row groups, so a tile reads only the
row groups of its lanes and window (predicate pushdown on the row groups' statistics).
Exact spans come from the ingested spans table the same way.

Memory is bounded by what one chunk or one tile holds: ``CHUNK_SPANS`` spans while
building, and for a tile the row groups its lanes touch, at most ``EXACT_LIMIT`` exact
spans per lane in the answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from goblueprint.errors import GoblueprintError
from goblueprint.timeline.detail import Levels, merge_overlaps, plan_levels, runs
from goblueprint.timeline.ingest import TIMELINE_DIR, Ingested

STORE_FORMAT = 1  # bump when the stored levels change meaning
CHUNK_SPANS = 1_000_000  # spans read at once while building the levels
# A tile answers a lane with its exact spans up to this many in its window: the viewer draws
# them once at most one per two pixels is in view, and asks for twice the view.
EXACT_LIMIT = 5_000
ROW_GROUP = 65_536  # rows per row group of a level file: what a tile reads at least
LEVEL_SCHEMA = {
    "lane_kind": pl.UInt8,
    "lane_id": pl.Int64,
    "b0": pl.Int64,
    "b1": pl.Int64,
    "state": pl.UInt8,
    "fill": pl.UInt8,
}
SPAN_COLUMNS = ("lane_kind", "lane_id", "start", "end", "state", "g", "p", "m", "label", "stack")


@dataclass(frozen=True)
class DetailStore:
    """The stored levels of one ingested trace."""

    path: Path
    found: Ingested
    levels: Levels
    origin: int
    duration: int

    @property
    def spans_file(self) -> Path:
        return self.found.path / TIMELINE_DIR / "spans.parquet"

    def level_file(self, level: int) -> Path:
        return self.path / f"level_{level}.parquet"

    def span_counts(self) -> pl.DataFrame:
        """Spans per lane (lane_kind, lane_id, n), as stored at build time."""
        return pl.read_parquet(self.path / "counts.parquet")

    def runs(self, lanes: pl.DataFrame, level: int, t_from: int, t_to: int) -> pl.DataFrame:
        """LEVEL's runs of LANES (lane_kind, lane_id) that overlap [T_FROM, T_TO) ns since the
        trace start, clipped to the buckets the window touches; sorted by lane then b0."""
        width = self.levels.width(level)
        lo, hi = t_from // width, -(-t_to // width)
        return (
            pl.scan_parquet(self.level_file(level))
            .filter(_lanes_filter(lanes) & (pl.col("b1") > lo) & (pl.col("b0") < hi))
            .with_columns(pl.col("b0").clip(lower_bound=lo), pl.col("b1").clip(upper_bound=hi))
            .collect()
        )

    def window_counts(self, lanes: pl.DataFrame, t_from: int, t_to: int) -> pl.DataFrame:
        """Spans of LANES overlapping [T_FROM, T_TO): (lane_kind, lane_id, n), lanes with none absent."""
        a, b = self.origin + t_from, self.origin + t_to
        return (
            pl.scan_parquet(self.spans_file)
            .select("lane_kind", "lane_id", "start", "end")
            .filter(_lanes_filter(lanes) & (pl.col("start") < b) & (pl.col("end") > a))
            .group_by(["lane_kind", "lane_id"])
            .agg(pl.len().alias("n"))
            .collect()
        )

    def spans(self, lanes: pl.DataFrame, t_from: int, t_to: int) -> pl.DataFrame:
        """The exact spans of LANES overlapping [T_FROM, T_TO), the spans table's columns, in its order."""
        a, b = self.origin + t_from, self.origin + t_to
        return (
            pl.scan_parquet(self.spans_file)
            .select(SPAN_COLUMNS)
            .filter(_lanes_filter(lanes) & (pl.col("start") < b) & (pl.col("end") > a))
            .collect()
        )


def _lanes_filter(lanes: pl.DataFrame) -> pl.Expr:
    """A filter for the rows of LANES (lane_kind, lane_id): per kind an id range and set, so
    row groups outside the ids' range are skipped by their statistics."""
    terms = []
    for (kind,), ids in lanes.group_by("lane_kind", maintain_order=True):
        values = ids["lane_id"]
        terms.append(
            (pl.col("lane_kind") == kind)
            & pl.col("lane_id").is_between(values.min(), values.max())
            & pl.col("lane_id").is_in(values.implode())
        )
    return pl.any_horizontal(terms) if terms else pl.lit(False)


def store_root() -> Path:
    from goblueprint.toolchain import cache_dir

    return cache_dir() / "detail"


def open_store(found: Ingested) -> DetailStore:
    """The stored levels of FOUND: from the cache, or built now (once per ingested trace)."""
    from goblueprint.toolchain.cachelock import publish

    meta = found.manifest["timeline"]
    origin, duration = int(meta["start_ns"]), max(1, int(meta["end_ns"]) - int(meta["start_ns"]))
    levels = plan_levels(duration)
    key = f"{found.manifest['content']}-{found.manifest['code'][:16]}-v{STORE_FORMAT}"
    target = store_root() / key

    def sound() -> bool:
        try:
            done = json.loads((target / "levels.json").read_text())
        except (OSError, ValueError):
            return False
        return done == levels.to_json()

    spans = found.path / TIMELINE_DIR / "spans.parquet"
    publish(
        target,
        lambda tmp: _build(spans, origin, levels, tmp),
        ready=sound,
        announce=f"building the levels of detail of {found.manifest['trace']['name']}"
        if found.manifest["trace"]["bytes"] >= 4_000_000
        else None,
        hint="later views read them",
    )
    if not sound():
        raise GoblueprintError(f"the levels of detail in {target} are incomplete")
    return DetailStore(path=target, found=found, levels=levels, origin=origin, duration=duration)


def _build(spans: Path, origin: int, levels: Levels, out: Path) -> None:
    import pyarrow.parquet as pq

    out.mkdir(parents=True)
    counts = (
        pl.scan_parquet(spans)
        .group_by(["lane_kind", "lane_id"])
        .agg(pl.len().alias("n"))
        .sort(["lane_kind", "lane_id"])
        .collect(engine="streaming")
    )
    counts.write_parquet(out / "counts.parquet")
    schema = pl.DataFrame(schema=LEVEL_SCHEMA).to_arrow().schema
    writers = [pq.ParquetWriter(out / f"level_{k}.parquet", schema) for k in range(levels.count)]
    try:
        for chunk in _chunks(counts):
            keys = chunk.with_row_index("lane").select("lane_kind", "lane_id", pl.col("lane").cast(pl.UInt32))
            inp = merge_overlaps(
                pl.scan_parquet(spans)
                .select("lane_kind", "lane_id", "start", "end", "state")
                .filter(_lanes_filter(chunk))
                .join(keys.lazy(), on=["lane_kind", "lane_id"])
                .select("lane", pl.col("start") - origin, pl.col("end") - origin, "state")
            ).collect()
            for k, writer in enumerate(writers):
                level = (
                    runs(inp, levels.width(k), merged=True)
                    .join(keys, on="lane")
                    .sort(["lane_kind", "lane_id", "b0"])
                    .select(list(LEVEL_SCHEMA))
                    .cast(LEVEL_SCHEMA)
                )
                writer.write_table(level.to_arrow(), row_group_size=ROW_GROUP)
    finally:
        for writer in writers:
            writer.close()
    (out / "levels.json").write_text(json.dumps(levels.to_json(), sort_keys=True))


def _chunks(counts: pl.DataFrame) -> list[pl.DataFrame]:
    """Consecutive lanes (in the spans table's order) cut where the running count of spans
    crosses a multiple of CHUNK_SPANS: a chunk holds under 2 * CHUNK_SPANS spans unless one
    lane alone has more."""
    total = counts["n"].cum_sum() - counts["n"]
    group = (total // CHUNK_SPANS).rle_id()
    return [part for _, part in counts.with_columns(group.alias("_c")).group_by("_c", maintain_order=True)]
