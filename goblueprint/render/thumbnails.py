"""Small pictures of the demo's views, drawn offline with matplotlib, as PNG data URIs.

Each function takes columns (the artefacts' own tables) and returns ``data:image/png``
text to put in an ``<img>``: the landing page stays one file with no network.  The
bytes are deterministic: Agg rasterises the same figure to the same pixels, and the
PNG carries no date or software tag.  Sizes are bounded whatever the trace: timelines
are binned to a fixed number of columns before anything is drawn.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np
import polars as pl

from goblueprint.render.svg import PALETTE

WIDTH_IN, HEIGHT_IN, DPI = 3.6, 1.7, 100
_BINS = 360
_INK = "#4b5563"


def _figure():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
    ax.tick_params(labelsize=7, colors=_INK, length=2)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color("#c7ccd6")
    return fig, ax


def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout(pad=0.4)
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def busy_fraction(starts: np.ndarray, ends: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Share of each bin [edges[k], edges[k+1]) covered by disjoint intervals (sorted by start)."""
    if len(starts) == 0:
        return np.zeros(len(edges) - 1)
    durations = ends - starts
    before = np.concatenate(([0], np.cumsum(durations)))
    # Covered time up to x: every interval started before x, less the part of the last
    # one that reaches past x.
    k = np.searchsorted(starts, edges, side="right")
    covered = before[k].astype(np.float64)
    last = np.maximum(k - 1, 0)
    overshoot = np.where(k > 0, np.maximum(ends[last] - edges, 0), 0)
    covered -= overshoot
    width = np.diff(edges).astype(np.float64)
    return np.clip(np.diff(covered) / np.where(width > 0, width, 1), 0, 1)


def timeline_thumbnail(intervals: pl.DataFrame) -> str:
    """Procs and GC over the whole trace: one row per P, greener where it ran goroutines."""
    procs = intervals.filter(pl.col("lane_kind_name") == "P")
    gc = intervals.filter(pl.col("lane_kind_name") == "GC").sort("start")
    t0 = int(intervals["start"].min() or 0)
    t1 = max(int(intervals["end"].max() or 0), t0 + 1)
    edges = np.linspace(t0, t1, _BINS + 1)
    rows, names = [], []
    for (pid,), lane in sorted(procs.group_by("lane_id"), key=lambda kv: kv[0][0]):
        runs = lane.filter((pl.col("state_name") == "running") & (pl.col("g") >= 0)).sort("start")
        rows.append(busy_fraction(runs["start"].to_numpy(), runs["end"].to_numpy(), edges))
        names.append(f"P{pid}")
    fig, ax = _figure()
    from matplotlib.colors import LinearSegmentedColormap, to_rgb

    green = LinearSegmentedColormap.from_list("run", ["#eef1f5", PALETTE["running"]])
    if rows:
        ax.imshow(np.array(rows), aspect="auto", cmap=green, vmin=0, vmax=1, interpolation="nearest",
                  extent=(0, (t1 - t0) / 1e6, len(rows) - 0.5, -0.5))  # fmt: skip
    if gc.height:
        share = busy_fraction(gc["start"].to_numpy(), gc["end"].to_numpy(), edges)
        colour = np.array(to_rgb(PALETTE["gc"]))
        strip = np.ones((1, _BINS, 4))
        strip[0, :, :3] = colour
        strip[0, :, 3] = np.minimum(1, share * 3)
        ax.imshow(strip, aspect="auto", interpolation="nearest",
                  extent=(0, (t1 - t0) / 1e6, len(rows) + 0.5, len(rows) - 0.5))  # fmt: skip
        names.append("GC")
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlabel("ms", fontsize=7, color=_INK, labelpad=1)
    return _png(fig)


def latency_thumbnail(delays_ns: np.ndarray) -> str:
    """Scheduling latency (runnable → running) as a histogram on a log scale."""
    fig, ax = _figure()
    d = np.asarray(delays_ns, dtype=np.float64)
    d = d[d > 0] / 1e3
    if len(d):
        lo, hi = np.log10(d.min()), np.log10(max(d.max(), d.min() * 10))
        ax.hist(d, bins=np.logspace(lo, hi, 40), color=PALETTE["runnable"], edgecolor="none")
        ax.set_xscale("log")
        for q, style in ((50, "-"), (99, "--")):
            x = float(np.percentile(d, q))
            ax.axvline(x, color=_INK, lw=0.8, ls=style)
            ax.text(x, ax.get_ylim()[1] * 0.92, f" p{q}", fontsize=6.5, color=_INK, va="top")
    ax.set_xlabel("µs runnable before running", fontsize=7, color=_INK, labelpad=1)
    return _png(fig)


def series_thumbnail(t_ms: Sequence[float], series: dict[str, Sequence[float]]) -> str:
    """A few step series over time (schedtrace's run queue, idle Ps, threads…)."""
    fig, ax = _figure()
    colours = ("#4a78c2", PALETTE["runnable"], PALETTE["syscall"], PALETTE["running"])
    for (name, values), colour in zip(series.items(), colours, strict=False):
        ax.step(t_ms, values, where="post", lw=1.1, color=colour, label=name)
    if series:
        ax.legend(fontsize=6.5, frameon=False, loc="upper right", ncols=len(series))
    ax.set_xlabel("ms", fontsize=7, color=_INK, labelpad=1)
    return _png(fig)


def bars_thumbnail(labels: Sequence[str], values_ms: Sequence[float], colour: str, xlabel: str) -> str:
    """Horizontal bars, largest on top (time by goroutine group, by block reason…)."""
    fig, ax = _figure()
    short = [s if len(s) <= 28 else "…" + s[-27:] for s in labels]
    ax.barh(range(len(values_ms)), values_ms, color=colour)
    ax.set_yticks(range(len(short)), short, fontsize=6.5)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel, fontsize=7, color=_INK, labelpad=1)
    return _png(fig)


def svg_data_uri(svg_text: str) -> str:
    """An SVG file of our own (the state machines) as an image: shown, never parsed as markup."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg_text.encode("utf-8")).decode("ascii")
