"""The timeline builder's output, byte for byte, on real traces committed as goldens.

A change to goblueprint/timeline/builder.py (e.g. for speed) must change nothing: the
traces under golden_builder/ (xz, so the input is the same on every machine: traces of a
running program differ run to run) are built and each Timeline table is compared, by row
count and SHA-256 of its CSV, with golden.json.  Regenerate with GOBLUEPRINT_REGEN=1 only
after a change that is meant to alter output.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
from pathlib import Path
from typing import Any

import pytest

from goblueprint.timeline.builder import TimelineBuilder, build
from goblueprint.timeline.model import Timeline

GOLDEN_DIR = Path(__file__).parent / "golden_builder"
GOLDEN = GOLDEN_DIR / "golden.json"
TABLES = ("spans", "flows", "counters", "instants", "lanes", "stack_frames")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def snapshot(tl: Timeline) -> dict[str, Any]:
    """What must not change: scalars, the strings list and every table (schema and rows, in order)."""
    out: dict[str, Any] = {
        "start_ns": tl.start_ns,
        "end_ns": tl.end_ns,
        "go_version": tl.go_version,
        "strings": {"count": len(tl.strings), "sha256": _sha("\n".join(tl.strings).encode())},
    }
    for name in TABLES:
        df = getattr(tl, name)
        schema = ",".join(f"{col}:{dtype}" for col, dtype in df.schema.items())
        out[name] = {"rows": df.height, "schema": schema, "sha256": _sha(df.write_csv().encode())}
    return out


def _golden_traces() -> list[str]:
    return sorted(p.name.removesuffix(".trace.xz") for p in GOLDEN_DIR.glob("*.trace.xz"))


def test_golden_traces_are_present() -> None:
    # The parametrised test below would silently vanish without its inputs.
    assert len(_golden_traces()) >= 6


@pytest.mark.parametrize("name", _golden_traces())
def test_timeline_matches_golden(name: str) -> None:
    data = lzma.decompress((GOLDEN_DIR / f"{name}.trace.xz").read_bytes())
    got = snapshot(build(data))
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if os.environ.get("GOBLUEPRINT_REGEN") == "1":
        golden[name] = got
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    assert name in golden, f"no golden for {name}; generate with GOBLUEPRINT_REGEN=1"
    assert got == golden[name], f"{name}: timeline changed; review, then regenerate with GOBLUEPRINT_REGEN=1"


def _assert_same(new: Timeline, old: Timeline) -> None:
    assert (new.start_ns, new.end_ns) == (old.start_ns, old.end_ns)
    assert new.strings == old.strings
    for name in TABLES:
        a, b = getattr(new, name), getattr(old, name)
        assert a.schema == b.schema, name
        assert a.equals(b), name


def _built_in_pieces(data: bytes, sizes: Any) -> Timeline:
    """The Timeline of a trace whose reader chunks are cut into pieces of SIZES rows (cycled)."""
    from goblueprint.trace.reader import Reader
    from goblueprint.trace.store import Interner, chunk_columns

    it = Interner()
    builder = TimelineBuilder()
    last = 0
    for chunk in Reader(data).chunks():
        cols = chunk_columns(chunk, it)
        n = len(cols["kind"])
        at = 0
        while at < n:
            size = next(sizes)
            builder.columns({k: v[at : at + size] for k, v in cols.items()}, it)
            at += size
        if n:
            last = int(cols["time"][-1])
    return builder.finish(last)


def test_timeline_does_not_depend_on_chunking() -> None:
    # The builder's state (open spans, pending flows, regions, ranges, tasks, the M contexts)
    # outlives each chunk and its output tables grow as they fill: pieces of 1 to 300 events
    # must give the very Timeline that whole chunks give.
    import itertools

    import numpy as np

    data = lzma.decompress((GOLDEN_DIR / "cpusample-go1.27.trace.xz").read_bytes())
    whole = _built_in_pieces(data, itertools.repeat(1 << 20))
    sizes = np.random.default_rng(3).integers(1, 300, 1000).tolist()
    _assert_same(_built_in_pieces(data, itertools.cycle(sizes)), whole)
    assert whole.spans.height > 30_000 and whole.flows.height and whole.instants.height


@pytest.mark.parametrize("chunks", [1, 7])
def test_column_by_column_sort_is_dataframe_sort(chunks: int) -> None:
    # finish() sorts the spans through _sorted_column_by_column to save memory; the Timeline
    # must be what a stable DataFrame.sort gives, also where rows share keys.
    import numpy as np
    import polars as pl

    from goblueprint.timeline.builder import _sorted_column_by_column

    rng = np.random.default_rng(7)
    n = 600_000
    df = pl.DataFrame(
        {
            "lane_kind": rng.integers(0, 3, n).astype(np.uint8),
            "lane_id": rng.integers(0, 40, n),
            "start": rng.integers(0, 300, n),
            "end": rng.integers(0, 300, n),
            "payload": np.arange(n),
        }
    )
    df = pl.concat([df[i : i + n // chunks] for i in range(0, n, n // chunks)], rechunk=False)
    keys = ["lane_kind", "lane_id", "start", "end"]
    want = df.sort(keys, maintain_order=True)
    assert want.select(keys).is_duplicated().any()  # the data has ties to keep in order
    assert _sorted_column_by_column(df, keys).equals(want)
