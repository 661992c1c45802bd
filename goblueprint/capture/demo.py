"""The steps of ``goblueprint demo``: one capture, then every view into one folder.

Each view is produced by the project's own command, called in-process through
``goblueprint.cli.main([...])`` with an output path, exactly as a user would
type it.  A step whose command module does not exist (yet) is skipped with a
note; every step that exists really runs, and a failing one is reported with
its message while the others go on.
"""

from __future__ import annotations

import contextlib
import html
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


@dataclass
class StepResult:
    step: Step
    status: str  # "ok", "skipped", "failed"
    seconds: float = 0.0
    message: str = ""
    files: list[str] = field(default_factory=list)


STEPS: tuple[Step, ...] = (
    Step("trace-stats.json", "Trace statistics (events, goroutines, Ps, Ms)", "trace_stats",
         ("trace", "stats", "--json", "{trace}"), stdout=True),
    Step("timeline.html", "Interactive timeline (offline HTML)", "trace_timeline",
         ("trace", "timeline", "-o", "{out}", "{trace}")),
    Step("timeline.svg", "Timeline as a static SVG Gantt chart", "trace_timeline",
         ("trace", "timeline", "--svg", "-o", "{out}", "{trace}"), extra=True),
    Step("metrics.txt", "Scheduler metrics (latency, P utilisation, GC pauses)", "trace_metrics",
         ("trace", "metrics", "{trace}"), stdout=True),
    Step("metrics.json", "Scheduler metrics as JSON", "trace_metrics",
         ("trace", "metrics", "--json", "{trace}"), stdout=True, extra=True),
    Step("schedtrace.html", "schedtrace time series and hints", "schedtrace",
         ("schedtrace", "--plot", "{out}", "{schedtrace}"), needs=("schedtrace",)),
    Step("schedtrace.json", "schedtrace samples as JSON", "schedtrace",
         ("schedtrace", "--json", "{schedtrace}"), stdout=True, needs=("schedtrace",)),
    Step("trace.perfetto-trace", "Perfetto trace (open in ui.perfetto.dev or the Perfetto UI)", "trace_export",
         ("trace", "export", "-f", "perfetto", "-o", "{out}", "{trace}")),
    Step("trace.chrome.json", "Chrome trace-event JSON", "trace_export",
         ("trace", "export", "-f", "chrome", "-o", "{out}", "{trace}"), extra=True),
    Step("parquet", "Parquet tables of the trace (for DuckDB/polars)", "trace_export",
         ("trace", "export", "-f", "parquet", "-o", "{out}", "{trace}")),
    Step("pprof-sched.pb.gz", "pprof: scheduler latency (runnable → running)", "trace_pprof",
         ("trace", "pprof", "--type", "sched", "-o", "{out}", "{trace}")),
    Step("pprof-sync.pb.gz", "pprof: blocking on channels and mutexes", "trace_pprof",
         ("trace", "pprof", "--type", "sync", "-o", "{out}", "{trace}")),
    Step("pprof-syscall.pb.gz", "pprof: time in syscalls", "trace_pprof",
         ("trace", "pprof", "--type", "syscall", "-o", "{out}", "{trace}"), extra=True),
    Step("pprof-net.pb.gz", "pprof: blocking on the network", "trace_pprof",
         ("trace", "pprof", "--type", "net", "-o", "{out}", "{trace}"), extra=True),
    Step("states-g.svg", "G state machine from the runtime source", "source_states",
         ("source", "states", "--machine", "g", "--go", "{go}", "--format", "svg"), stdout=True, needs=()),
    Step("states-p.svg", "P state machine from the runtime source", "source_states",
         ("source", "states", "--machine", "p", "--go", "{go}", "--format", "svg"), stdout=True, needs=()),
    Step("states.md", "G and P state transitions with their source lines", "source_states",
         ("source", "states", "--machine", "g", "--go", "{go}", "--format", "md"), stdout=True, needs=()),
    Step("layout-g.txt", "Layout of runtime.g in the captured binary (DWARF)", "binary_layout",
         ("binary", "layout", "{binary}", "runtime.g"), stdout=True, needs=("binary",)),
    Step("layout-p.txt", "Layout of runtime.p in the captured binary (DWARF)", "binary_layout",
         ("binary", "layout", "{binary}", "runtime.p"), stdout=True, needs=("binary",)),
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


def index_html(title: str, summary_text: str, results: list[StepResult], capture_files: list[str]) -> str:
    """The folder's front page: every artefact with a link, every skip and failure with its reason."""
    rows = []
    for r in results:
        name = html.escape(r.step.name)
        link = f"<a href='{name}'>{name}</a>" if r.status == "ok" else name
        rows.append(
            f"<tr class='{r.status}'><td>{link}</td><td>{html.escape(r.step.title)}</td>"
            f"<td>{r.status}</td><td>{r.seconds:.1f}s</td><td>{html.escape(r.message)}</td></tr>"
        )
    captured = "".join(f"<li><a href='{html.escape(f)}'>{html.escape(f)}</a></li>" for f in capture_files)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>"
        "body{font-family:system-ui,sans-serif;margin:1.5em 2em;max-width:70em}"
        "table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.3em .6em;text-align:left}"
        "tr.skipped td{color:#888}tr.failed td{color:#a00}pre{background:#f6f6f6;padding:1em;overflow:auto}"
        "</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        f"<h2>Capture</h2><pre>{html.escape(summary_text)}</pre><ul>{captured}</ul>"
        "<h2>Views</h2><table><tr><th>file</th><th>what</th><th>status</th><th>time</th><th>note</th></tr>"
        + "".join(rows)
        + "</table></body></html>\n"
    )
