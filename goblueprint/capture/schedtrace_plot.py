"""Plots of a schedtrace time series (rendering only: takes parsed samples)."""

from __future__ import annotations

import html
import io
from pathlib import Path

from goblueprint.capture.schedtrace import Schedtrace
from goblueprint.capture.schedtrace_analysis import Hint, per_p_runq
from goblueprint.errors import UsageError

FORMATS = (".svg", ".png", ".html")


def _figure(trace: Schedtrace, hints: list[Hint], title: str):  # returns a matplotlib Figure
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s.t_ms for s in trace.samples]

    def series(key: str) -> list[float]:
        return [float("nan") if (v := s.counters.get(key)) is None else v for s in trace.samples]

    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(10, 7.5), sharex=True)
    ax1.step(t, series("runqueue"), where="post", label="global runqueue")
    locals_ = [sum(q) if (q := per_p_runq(s)) is not None else float("nan") for s in trace.samples]
    ax1.step(t, locals_, where="post", label="local runqs (sum)")
    ax1.set_ylabel("goroutines")
    ax1.legend(loc="upper right", fontsize="small")
    ax2.step(t, series("gomaxprocs"), where="post", label="gomaxprocs")
    ax2.step(t, series("idleprocs"), where="post", label="idle Ps")
    ax2.set_ylabel("Ps")
    ax2.legend(loc="upper right", fontsize="small")
    ax3.step(t, series("threads"), where="post", label="threads")
    ax3.step(t, series("spinningthreads"), where="post", label="spinning")
    ax3.step(t, series("idlethreads"), where="post", label="idle threads")
    ax3.set_ylabel("Ms")
    ax3.set_xlabel("ms since start")
    ax3.legend(loc="upper right", fontsize="small")
    colors = {"runq-with-idle-procs": "tab:red", "spinning": "tab:orange", "stuck-p": "tab:purple"}
    targets = {"runq-with-idle-procs": ax1, "spinning": ax3, "stuck-p": ax2}
    for hint in hints:
        targets[hint.kind].axvspan(hint.start_ms, hint.end_ms, color=colors[hint.kind], alpha=0.15)
    from matplotlib.ticker import MaxNLocator

    for ax in (ax1, ax2, ax3):
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of goroutines, Ps, Ms
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def write(trace: Schedtrace, hints: list[Hint], out: Path, title: str = "schedtrace") -> None:
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"--plot {out}: the file must end in {', '.join(FORMATS)}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Fixed metadata keeps SVG output byte-stable between runs.
    fig = _figure(trace, hints, title)
    try:
        if suffix == ".png":
            fig.savefig(out, format="png", dpi=100, metadata={"Software": None})
            return
        buf = io.StringIO()
        matplotlib.rcParams["svg.hashsalt"] = "goblueprint"
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        svg = buf.getvalue()
    finally:
        plt.close(fig)
    if suffix == ".svg":
        out.write_text(svg)
        return
    items = "".join(f"<li>{html.escape(h.message)}</li>" for h in hints) or "<li>none</li>"
    start = svg.find("<svg")
    out.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>"
        + html.escape(title)
        + "</title><style>body{font-family:sans-serif;margin:1em 2em}</style></head><body><h1>"
        + html.escape(title)
        + f"</h1><p>{len(trace.samples)} samples</p>"
        + svg[start:]
        + f"<h2>Hints</h2><ul>{items}</ul></body></html>\n"
    )
