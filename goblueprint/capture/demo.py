"""The steps of ``goblueprint demo``: one capture, then every view into one folder.

Each view is produced by the project's own command, called in-process through
``goblueprint.cli.main([...])`` with an output path, exactly as a user would
type it.  A step whose command module does not exist (yet) is skipped with a
note; every step that exists really runs, and a failing one is reported with
its message while the others go on.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

WORKLOAD_DIR = Path(__file__).parent / "workload"


@dataclass(frozen=True)
class Step:
    name: str  # the artefact's file (or folder) name inside the output folder
    title: str
    module: str  # goblueprint.cli module that must exist, e.g. "trace_timeline"
    argv: tuple[str, ...]  # with {trace}, {schedtrace}, {binary}, {out} placeholders
    stdout: bool = False  # the command prints its artefact: keep stdout as the file
    needs: tuple[str, ...] = ("trace",)
    extra: bool = False  # only with --all: another format of a view already written
    how: str = ""  # how to open the artefact, in the tool its users know ({name}: the file)


@dataclass
class StepResult:
    step: Step
    status: str  # "ok", "skipped", "failed"
    seconds: float = 0.0
    message: str = ""
    files: list[str] = field(default_factory=list)


_BROWSER = "open {name} in a browser (works offline)"
_PPROF = "go tool pprof -http=: {name}"
STEPS: tuple[Step, ...] = (
    Step("trace-stats.json", "Trace statistics (events, goroutines, Ps, Ms)", "trace_stats",
         ("trace", "stats", "--json", "{trace}"), stdout=True, how="jq . {name}"),
    Step("timeline.html", "Interactive timeline (offline HTML)", "trace_timeline",
         ("trace", "timeline", "-o", "{out}", "{trace}"), how=_BROWSER + "\n? in the page lists its keys"),
    Step("timeline.svg", "Timeline as a static SVG Gantt chart", "trace_timeline",
         ("trace", "timeline", "--svg", "-o", "{out}", "{trace}"), extra=True, how=_BROWSER),
    Step("metrics.txt", "Scheduler metrics (latency, P utilisation, GC pauses)", "trace_metrics",
         ("trace", "metrics", "{trace}"), stdout=True, how="less {name}"),
    Step("metrics.json", "Scheduler metrics as JSON", "trace_metrics",
         ("trace", "metrics", "--json", "{trace}"), stdout=True, how="jq .sched_latency {name}"),
    Step("schedtrace.html", "schedtrace time series and hints", "schedtrace",
         ("schedtrace", "--plot", "{out}", "{schedtrace}"), needs=("schedtrace",), how=_BROWSER),
    Step("schedtrace.json", "schedtrace samples as JSON", "schedtrace",
         ("schedtrace", "--json", "{schedtrace}"), stdout=True, needs=("schedtrace",), how="jq '.samples[0]' {name}"),
    Step("trace.perfetto-trace", "Perfetto trace (open in ui.perfetto.dev or the Perfetto UI)", "trace_export",
         ("trace", "export", "-f", "perfetto", "-o", "{out}", "{trace}"),
         how="https://ui.perfetto.dev → Open trace file → {name}\n(the file is read in the browser, not uploaded)"),
    Step("trace.chrome.json", "Chrome trace-event JSON", "trace_export",
         ("trace", "export", "-f", "chrome", "-o", "{out}", "{trace}"), extra=True,
         how="https://ui.perfetto.dev → Open trace file → {name}\nor chrome://tracing → Load"),
    Step("parquet", "Parquet tables of the trace (for DuckDB/polars)", "trace_export",
         ("trace", "export", "-f", "parquet", "-o", "{out}", "{trace}"),
         how="duckdb -c \"SELECT * FROM '{name}/intervals.parquet' LIMIT 10\"\n"
             "python -c \"import duckdb; duckdb.sql(\\\"SELECT name, count(*) FROM '{name}/goroutines.parquet' GROUP BY ALL\\\").show()\""),
    Step("pprof-sched.pb.gz", "pprof: scheduler latency (runnable → running)", "trace_pprof",
         ("trace", "pprof", "--type", "sched", "-o", "{out}", "{trace}"), how=_PPROF),
    Step("pprof-sync.pb.gz", "pprof: blocking on channels and mutexes", "trace_pprof",
         ("trace", "pprof", "--type", "sync", "-o", "{out}", "{trace}"), how=_PPROF),
    Step("pprof-syscall.pb.gz", "pprof: time in syscalls", "trace_pprof",
         ("trace", "pprof", "--type", "syscall", "-o", "{out}", "{trace}"), extra=True, how=_PPROF),
    Step("pprof-net.pb.gz", "pprof: blocking on the network", "trace_pprof",
         ("trace", "pprof", "--type", "net", "-o", "{out}", "{trace}"), extra=True, how=_PPROF),
    Step("states-g.svg", "G state machine from the runtime source", "source_states",
         ("source", "states", "--machine", "g", "--go", "{go}", "--format", "svg"), stdout=True, needs=(),
         how=_BROWSER),
    Step("states-p.svg", "P state machine from the runtime source", "source_states",
         ("source", "states", "--machine", "p", "--go", "{go}", "--format", "svg"), stdout=True, needs=(),
         how=_BROWSER),
    Step("states.md", "G and P state transitions with their source lines", "source_states",
         ("source", "states", "--machine", "g", "--go", "{go}", "--format", "md"), stdout=True, needs=(),
         how="any Markdown viewer, or less {name}"),
    Step("layout-g.txt", "Layout of runtime.g in the captured binary (DWARF)", "binary_layout",
         ("binary", "layout", "{binary}", "runtime.g"), stdout=True, needs=("binary",), how="less {name}"),
    Step("layout-p.txt", "Layout of runtime.p in the captured binary (DWARF)", "binary_layout",
         ("binary", "layout", "{binary}", "runtime.p"), stdout=True, needs=("binary",), how="less {name}"),
)  # fmt: skip


def command_exists(module: str) -> bool:
    return importlib.util.find_spec(f"goblueprint.cli.{module}") is not None


def run_step(step: Step, out_dir: Path, values: dict[str, str | None]) -> StepResult:
    from goblueprint.cli import main

    if not command_exists(step.module):
        return StepResult(
            step, "skipped", message=f"`goblueprint {step.module.replace('_', ' ')}` does not exist yet"
        )
    missing = [need for need in step.needs if not values.get(need)]
    if missing:
        return StepResult(step, "skipped", message=f"the capture has no {', '.join(missing)}")
    target = out_dir / step.name
    fill = {k: v for k, v in values.items() if v is not None} | {"out": str(target)}
    argv = [arg.format(**fill) for arg in step.argv]
    out, err = io.StringIO(), io.StringIO()
    t0 = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as exc:  # argparse rejected the arguments: the command's interface changed
        code = exc.code if isinstance(exc.code, int) else 2
    except Exception as exc:  # one broken view must not take the others down
        return StepResult(step, "failed", time.monotonic() - t0, f"crashed: {type(exc).__name__}: {exc}")
    seconds = time.monotonic() - t0
    if code != 0:
        lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
        return StepResult(step, "failed", seconds, lines[-1] if lines else f"exit status {code}")
    if step.stdout:
        target.write_text(out.getvalue())
    if not target.exists():
        return StepResult(step, "failed", seconds, f"the command wrote no {step.name}")
    return StepResult(step, "ok", seconds, files=[step.name])


def run_steps(
    out_dir: Path,
    values: dict[str, str | None],
    progress: Callable[[StepResult], None] | None = None,
    *,
    jobs: int = 1,
    extra: bool = False,
    only: set[str] | None = None,
) -> list[StepResult]:
    """Run the steps, JOBS at a time in worker processes (the views are CPU-bound Python)."""
    steps = [s for s in STEPS if (extra or not s.extra) and (only is None or s.name in only)]
    results: dict[Step, StepResult] = {}
    if jobs <= 1:
        for step in steps:
            results[step] = run_step(step, out_dir, values)
            if progress is not None:
                progress(results[step])
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        # spawn: the parent may hold threads; children import what they need.
        ctx = multiprocessing.get_context("spawn")
        try:
            with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
                futures = {pool.submit(run_step, step, out_dir, values): step for step in steps}
                for future in as_completed(futures):
                    result = future.result()
                    results[futures[future]] = result
                    if progress is not None:
                        progress(result)
        except (OSError, BrokenProcessPool):
            # No worker processes here (or one died): the remaining steps run in this process.
            for step in steps:
                if step not in results:
                    results[step] = run_step(step, out_dir, values)
                    if progress is not None:
                        progress(results[step])
    return [results[s] for s in steps]


def index_html(
    title: str,
    summary_text: str,
    results: list[StepResult],
    capture_files: list[str],
    out_dir: Path | None = None,
) -> str:
    """The folder's landing page: key figures, a picture of each view, how to open every
    file, every skip and failure with its reason.  Figures and pictures come from the
    artefacts the steps wrote into OUT_DIR (none without it)."""
    from goblueprint.render.landing import Landing, ViewCard, ViewFile, landing_html

    found = _Artefacts(out_dir)
    # Steps of one view (its formats) share a card: keyed by the view's first step (_CARD_OF).
    cards: dict[str, list[StepResult]] = {}
    for r in results:
        cards.setdefault(_CARD_OF.get(r.step.name, r.step.name), []).append(r)
    view_cards = []
    for members in cards.values():
        files = tuple(
            ViewFile(r.step.name, r.status, r.message, r.step.how.format(name=r.step.name)) for r in members
        )
        shown = next((r for r in members if r.status == "ok"), None)
        picture, caption = found.picture(shown.step.name) if shown else (None, "not written")
        excerpt = found.excerpt(shown.step.name) if shown and picture is None else ""
        view_cards.append(ViewCard(members[0].step.title, files, picture, caption, excerpt))
    how_capture = {
        "capture/trace.out": "go tool trace capture/trace.out",
        "capture/meta.json": "jq . capture/meta.json",
        "capture/schedtrace.log": "goblueprint schedtrace capture/schedtrace.log",
        "capture/crosscheck.json": "jq . capture/crosscheck.json",
    }
    go = found.stats.get("version", "") if found.stats else ""
    subtitle = "one run of the bundled workload, seen from every side" + (
        f" · trace format {go}" if go else ""
    )
    page = Landing(
        title=title,
        subtitle=subtitle,
        figures=key_figures(found.metrics, found.stats),
        cards=view_cards,
        capture_files=[(f, how_capture.get(f, "")) for f in capture_files],
        summary_text=summary_text,
    )
    return landing_html(page)


def _dur(ns: float) -> str:
    a = abs(ns)
    if a < 1e3:
        return f"{ns:.0f} ns"
    if a < 1e6:
        return f"{ns / 1e3:.3g} µs"
    if a < 1e9:
        return f"{ns / 1e6:.3g} ms"
    return f"{ns / 1e9:.3g} s"


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def key_figures(metrics: dict | None, stats: dict | None) -> list:
    """The run's numbers that matter first, from metrics.json and trace-stats.json.

    A figure whose source file is missing, or lacks a field, says so ("n/a" and why):
    never a silent zero, and never a page lost to one renamed field.
    """
    from goblueprint.render.landing import Figure

    try:
        return _figures(metrics, stats)
    except (KeyError, TypeError, ValueError) as exc:
        return [Figure("key figures", "n/a", f"metrics.json / trace-stats.json not as expected: {exc!r}")]


def _figures(metrics: dict | None, stats: dict | None) -> list:
    from goblueprint.render.landing import Figure

    out = []
    if metrics is None:
        why = "metrics.json was not written"
        out += [
            Figure(k, "n/a", why)
            for k in ("goroutines", "GC pauses", "sched latency p50 / p99", "P utilisation")
        ]
    else:
        threads = f" · {stats['threads']} threads" if stats else ""
        procs = metrics.get("procs", [])
        out.append(Figure("goroutines", f"{metrics['goroutines']:,}", f"{len(procs)} Ps{threads}"))
        stw = [p for p in metrics.get("pauses", []) if p.get("kind") == "stw"]
        count = sum(p["count"] for p in stw)
        total = sum(p["total"] for p in stw)
        longest = max((p["max"] for p in stw), default=0)
        out.append(
            Figure("GC pauses (stop-the-world)", f"{count} · {_dur(total)}", f"longest {_dur(longest)}")
        )
        lat = metrics["sched_latency"]
        out.append(
            Figure(
                "sched latency p50 / p99",
                f"{_dur(lat['p50'])} / {_dur(lat['p99'])}",
                f"runnable → running, {lat['count']:,} times; max {_dur(lat['max'])}",
            )
        )
        if procs:
            mean = sum(p["utilization"] for p in procs) / len(procs)
            each = " · ".join(f"P{p['p']} {p['utilization']:.0%}" for p in procs[:8])
            out.append(Figure("P utilisation (running goroutines)", f"{mean:.0%}", each))
        else:
            out.append(Figure("P utilisation (running goroutines)", "n/a", "no P in the trace"))
    if stats is None:
        out.append(Figure("trace", "n/a", "trace-stats.json was not written"))
    else:
        out.append(Figure("trace size", _bytes(stats["bytes"]), f"{stats['events']:,} events"))
        out.append(
            Figure("trace duration", _dur(stats["time_span_ns"]), f"{stats['generations']} generations")
        )
    return out


class _Artefacts:
    """What the landing page reads back from the views written into the folder."""

    def __init__(self, out_dir: Path | None) -> None:
        self.out_dir = out_dir
        self.metrics = self._json("metrics.json")
        self.stats = self._json("trace-stats.json")
        self._cache: dict[str, tuple[str | None, str]] = {}

    def _json(self, name: str) -> dict | None:
        import json

        path = self.out_dir / name if self.out_dir else None
        if path is None or not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # the card of that view shows its own status

    def _parquet(self, table: str):
        import polars as pl

        path = self.out_dir / "parquet" / f"{table}.parquet" if self.out_dir else None
        if path is None or not path.is_file():
            return None
        return pl.read_parquet(path)

    def excerpt(self, name: str, lines: int = 14, width: int = 100) -> str:
        """The first lines of a text view (its own thumbnail), "" for binary files and folders."""
        path = self.out_dir / name if self.out_dir else None
        if path is None or not path.is_file() or name.endswith((".gz", ".parquet", ".perfetto-trace")):
            return ""
        try:
            with path.open(encoding="utf-8", errors="replace") as handle:
                head = [handle.readline() for _ in range(lines)]
        except OSError:
            return ""
        return "".join(ln if len(ln) <= width else ln[: width - 1] + "…\n" for ln in head).rstrip("\n")

    def picture(self, name: str) -> tuple[str | None, str]:
        """(data URI or None, caption) for the view written as NAME."""
        kind = _PICTURE_OF.get(name)
        if kind is None:
            return None, "no picture for this view"
        if kind not in self._cache:
            import polars as pl

            try:
                self._cache[kind] = self._draw(kind, name)
            except (OSError, ValueError, KeyError, pl.exceptions.PolarsError) as exc:
                # A damaged artefact costs its picture, said on its card, not the whole page.
                self._cache[kind] = (None, f"no picture: {type(exc).__name__}: {exc}")
        return self._cache[kind]

    def _draw(self, kind: str, name: str) -> tuple[str | None, str]:
        import numpy as np
        import polars as pl

        from goblueprint.render import thumbnails as th
        from goblueprint.render.svg import PALETTE

        if kind == "svg":
            path = self.out_dir / name if self.out_dir else None
            if path is None or not path.is_file():
                return None, "not written"
            return th.svg_data_uri(path.read_text(encoding="utf-8")), ""
        if kind == "schedtrace":
            data = self._json("schedtrace.json")
            samples = (data or {}).get("samples") or []
            if not samples:
                return None, "no schedtrace samples"
            t = [s["t_ms"] for s in samples]
            series = {k: [s.get(k) or 0 for s in samples] for k in ("runqueue", "idleprocs", "threads")}
            return th.series_thumbnail(t, series), "global run queue, idle Ps and threads, every sample"
        if kind == "timeline":
            spans = self._parquet("intervals")
            if spans is None or spans.height == 0:
                return None, "no picture: the parquet tables were not written"
            return th.timeline_thumbnail(
                spans
            ), "each P over the whole trace: green where it runs goroutines, GC in purple"
        if kind == "latency":
            flows = self._parquet("flows")
            if flows is None:
                return None, "no picture: the parquet tables were not written"
            f = flows.filter(pl.col("to_time") >= 0)
            return th.latency_thumbnail((f["to_time"] - f["from_time"]).to_numpy()), (
                "scheduling latency: how long goroutines waited runnable (p50 solid, p99 dashed)"
            )
        g = self._parquet("goroutines")
        if g is None:
            return None, "no picture: the parquet tables were not written"
        if kind == "net":
            blocks = g.select("name", "block").explode("block").unnest("block").drop_nulls()
            top = blocks.filter(pl.col("reason") == "network").group_by("name").agg(pl.col("ns").sum())
            label, colour, what = "name", PALETTE["waiting"], "ms blocked on the network"
            caption = "time blocked on the network, by start function"
        elif kind == "block":
            blocks = g.select("block").explode("block").unnest("block").drop_nulls()
            top = (
                blocks.group_by("reason")
                .agg(pl.col("ns").sum())
                .filter(
                    ~pl.col("reason").is_in(["", "system goroutine wait", "forever"]) & (pl.col("ns") > 0)
                )
            )
            label, colour, what = "reason", PALETTE["waiting"], "ms blocked, by reason"
            caption = "time goroutines spent blocked, by Go's block reason"
        else:
            column, label = {
                "sched": ("sched_wait", "name"),
                "syscall": ("syscall", "name"),
                "exec": ("exec", "name"),
            }[kind]
            top = (
                g.with_columns(
                    pl.when(pl.col("name") == "")
                    .then(pl.lit("(unnamed)"))
                    .otherwise(pl.col("name"))
                    .alias("name")
                )
                .group_by("name")
                .agg(pl.col(column).sum().alias("ns"))
                .filter(pl.col("ns") > 0)
            )
            colour, what, caption = {
                "sched": (PALETTE["runnable"], "ms runnable", "time runnable but not running, by start function"),
                "syscall": (PALETTE["syscall"], "ms in syscalls", "time in syscalls, by start function"),
                "exec": (PALETTE["running"], "ms running",
                         "SELECT name, sum(exec) FROM 'parquet/goroutines.parquet' GROUP BY name"),
            }[kind]  # fmt: skip
        top = top.sort(["ns", label], descending=[True, False]).head(6)
        if top.height == 0:
            return None, f"nothing to show: no {what.removeprefix('ms ')}"
        values = (top["ns"].to_numpy() / 1e6).astype(np.float64)
        return th.bars_thumbnail(top[label].to_list(), values, colour, what), caption


# Formats of one view, shown on one card (by the card's first step).
_CARD_OF = {
    "timeline.svg": "timeline.html",
    "trace.chrome.json": "trace.perfetto-trace",
    "metrics.json": "metrics.txt",
    "schedtrace.json": "schedtrace.html",
}
# Which picture each view gets; views absent here get none.
_PICTURE_OF = {
    "timeline.html": "timeline",
    "timeline.svg": "timeline",
    "trace.perfetto-trace": "timeline",
    "trace.chrome.json": "timeline",
    "metrics.txt": "latency",
    "metrics.json": "latency",
    "schedtrace.html": "schedtrace",
    "schedtrace.json": "schedtrace",
    "parquet": "exec",
    "pprof-sched.pb.gz": "sched",
    "pprof-sync.pb.gz": "block",
    "pprof-syscall.pb.gz": "syscall",
    "pprof-net.pb.gz": "net",
    "states-g.svg": "svg",
    "states-p.svg": "svg",
}
