"""A static Gantt chart of a time window, as SVG (for documents and READMEs).

Same lanes and colours as the HTML viewer.  Spans narrower than a pixel are merged
per pixel column, so a window of a million spans still gives a small file.  Every
trace string is XML-escaped; hover titles use <title> elements (text, not markup).
"""

from __future__ import annotations

from html import escape

import numpy as np

from goblueprint.errors import UsageError
from goblueprint.render.lanes import GROUPS, arrange, sorted_spans, span_titles, state_names
from goblueprint.timeline.model import Timeline

# Same colours as timeline.js (keyed by state name, lower case).
PALETTE = {
    "running": "#2e9e5b",
    "runnable": "#e3b23c",
    "waiting": "#9aa7b8",
    "syscall": "#d9534f",
    "idle": "#d6dbe3",
    "stopped (stw)": "#b0243b",
    "gc": "#8e5bd9",
    "stop-the-world": "#b0243b",
    "gc mark assist": "#a56de2",
    "gc sweep": "#b58edb",
    "range": "#4a78c2",
    "region": "#5aa0e6",
    "task": "#3c7dbf",
}
LANE_H, GROUP_H, LABEL_W, AXIS_H, MAX_LANES = 16, 20, 200, 24, 400


def format_ns(ns: float) -> str:
    a = abs(ns)
    if a < 1e3:
        return f"{ns:.0f} ns"
    if a < 1e6:
        return f"{ns / 1e3:.4g} µs"
    if a < 1e9:
        return f"{ns / 1e6:.4g} ms"
    return f"{ns / 1e9:.4g} s"


def _nice_step(raw: float) -> float:
    p = 10 ** np.floor(np.log10(raw))
    for m in (1, 2, 5, 10):
        if m * p >= raw:
            return float(m * p)
    return float(10 * p)


def render_svg(tl: Timeline, t_from: int, t_to: int, width: int = 1200, title: str = "") -> str:
    """Gantt chart of [t_from, t_to) (ns since trace start); an empty window is a UsageError."""
    if t_to <= t_from:
        raise UsageError(f"empty window: --to ({format_ns(t_to)}) must be after --from ({format_ns(t_from)})")
    spans = sorted_spans(tl)
    lanes = arrange(tl, spans)
    title_of_span, titles = span_titles(tl, spans, lanes)
    names, code_to_index = state_names()
    colours = [PALETTE.get(n.lower(), "#888888") for n in names]
    a, b = tl.start_ns + t_from, tl.start_ns + t_to
    starts = spans["start"].to_numpy()
    ends = spans["end"].to_numpy()
    state = code_to_index[spans["state"].to_numpy()]
    plot_w = width - LABEL_W - 10
    scale = plot_w / (b - a)

    body: list[str] = []
    y = AXIS_H
    shown = 0
    hidden = 0
    group_titles = {key: title_ for key, title_, _k, _f in GROUPS}
    current_group = None
    for lane in lanes:
        lo, hi = lane.lo, lane.hi
        s, e = starts[lo:hi], ends[lo:hi]
        inside = np.flatnonzero((e > a) & (s < b) | ((s == e) & (s >= a) & (s < b)))
        if len(inside) == 0:
            continue
        if shown >= MAX_LANES:
            hidden += 1
            continue
        if lane.group != current_group:
            current_group = lane.group
            body.append(f'<rect x="0" y="{y}" width="{width}" height="{GROUP_H}" fill="#e8ebf1"/>')
            body.append(
                f'<text x="6" y="{y + GROUP_H - 6}" class="g">{escape(group_titles[lane.group])}</text>'
            )
            y += GROUP_H
        if shown % 2 == 0:
            body.append(f'<rect x="0" y="{y}" width="{width}" height="{LANE_H}" fill="#f4f6f9"/>')
        body.append(f'<text x="10" y="{y + LANE_H - 4}" class="l">{escape(_clip(lane.name, 30))}</text>')
        rows = lo + inside
        x0 = LABEL_W + (np.maximum(starts[rows], a) - a) * scale
        x1 = LABEL_W + (np.minimum(ends[rows], b) - a) * scale
        wide = (x1 - x0) >= 1
        # Sub-pixel spans: one 1-px mark per pixel column, coloured by the first span there.
        narrow = np.flatnonzero(~wide)
        cols, first = np.unique(np.floor(x0[narrow]).astype(np.int64), return_index=True)
        for c, k in zip(cols.tolist(), narrow[first].tolist(), strict=True):
            body.append(
                f'<rect x="{c}" y="{y + 2}" width="1" height="{LANE_H - 4}" '
                f'fill="{colours[state[rows[k]]]}" opacity="0.8"/>'
            )
        for k in np.flatnonzero(wide).tolist():
            r = int(rows[k])
            label = titles[int(title_of_span[r])]
            body.append(
                f'<rect x="{x0[k]:.2f}" y="{y + 2}" width="{x1[k] - x0[k]:.2f}" height="{LANE_H - 4}" '
                f'fill="{colours[state[r]]}"><title>{escape(label)} · {format_ns(ends[r] - starts[r])}</title></rect>'
            )
            if x1[k] - x0[k] > 60:
                chars = int((x1[k] - x0[k] - 6) / 6)
                body.append(
                    f'<text x="{x0[k] + 3:.2f}" y="{y + LANE_H - 5}" class="s">{escape(_clip(label, chars))}</text>'
                )
        y += LANE_H
        shown += 1
    if shown == 0:
        raise UsageError(f"no spans between {format_ns(t_from)} and {format_ns(t_to)} of the trace")
    if hidden:
        body.append(f'<text x="10" y="{y + 14}" class="l">… {hidden} more lanes not shown</text>')
        y += 20
    height = y + 6
    axis = [f'<rect x="0" y="0" width="{width}" height="{AXIS_H}" fill="#f1f3f7"/>']
    step = _nice_step((t_to - t_from) / plot_w * 110)
    t = np.ceil(t_from / step) * step
    while t <= t_to:
        x = LABEL_W + (t - t_from) * scale
        axis.append(
            f'<rect x="{x:.2f}" y="{AXIS_H - 6}" width="1" height="{height - AXIS_H + 6}" fill="#00000014"/>'
        )
        axis.append(f'<text x="{x + 3:.2f}" y="{AXIS_H - 9}" class="a">{escape(format_ns(t))}</text>')
        t += step
    head = escape(title or "goblueprint timeline")
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">',
            f"<title>{head} · {escape(format_ns(t_from))} – {escape(format_ns(t_to))}</title>",
            "<style>.g{font-size:12px;font-weight:600;fill:#1d2330}.l{font-size:11px;fill:#2b3240}"
            ".s{font-size:10px;fill:#fff}.a{font-size:11px;fill:#4b5563}</style>",
            f'<rect width="{width}" height="{height}" fill="#fcfcfd"/>',
            *body,
            *axis,
            "</svg>",
            "",
        ]
    )


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(1, chars - 1)] + "…"
