"""The one-screen text summary of a capture (formatting only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goblueprint.capture.schedtrace_analysis import Hint


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def render(
    out_dir: Path,
    meta: dict[str, Any],
    sched: dict[str, Any] | None,
    hints: list[Hint],
    cross: dict[str, Any] | None = None,
) -> str:
    lines = [f"capture of: {' '.join(meta['command'])}"]
    if meta.get("kind") == "test" and meta.get("package"):
        lines[0] += f"  (package {meta['package']})"
    status = "ok" if meta["error"] is None else f"FAILED: {meta['error']}"
    lines.append(
        f"  go {meta['go_version'] or '?'} · GOMAXPROCS {meta['gomaxprocs']} ({meta['gomaxprocs_source']}) · "
        f"wall {meta['wall_s']:.2f}s · {status}"
    )
    files = meta["files"]
    if files.get("trace"):
        lines.append(
            f"  trace       {out_dir / files['trace']}  ({_size(meta['trace_bytes'])}, via {meta['trace_via']})"
        )
    else:
        lines.append("  trace       (none)")
    if files.get("schedtrace"):
        lines.append(f"  schedtrace  {out_dir / files['schedtrace']}  ({meta['schedtrace_lines']} lines)")
    lines.append(f"  meta        {out_dir / 'meta.json'}")
    if sched and sched.get("samples"):
        procs = sched["gomaxprocs_values"]
        lines.append(
            f"  scheduler: {sched['samples']} samples over {sched['span_ms']} ms · GOMAXPROCS "
            f"{' → '.join(str(p) for p in procs) if len(procs) > 1 else procs[0]} · threads ≤ {sched['threads_max']}"
        )
        lines.append(
            f"             global runq max {sched['runqueue_max']} (mean {sched['runqueue_mean']}) · "
            f"idle Ps mean {sched['idleprocs_mean']} · samples with spinning Ms {sched['spinning_samples']}"
        )
    for hint in hints[:6]:
        lines.append(f"  hint: {hint.message}")
    if len(hints) > 6:
        lines.append(
            f"  … and {len(hints) - 6} more hints (goblueprint schedtrace {out_dir / 'schedtrace.log'})"
        )
    if cross:
        lines.append(_crosscheck_line(cross, meta))
    for note in meta.get("notes", []):
        lines.append(f"  note: {note}")
    return "\n".join(lines)


_ALIGNMENT = {
    "outside": "aligned by schedtrace's arrival times",
    "anchor": "aligned by the anchor log",
    "assumed": "assumed aligned",
}


def _crosscheck_line(cross: dict[str, Any], meta: dict[str, Any]) -> str:
    clocks = f"clocks {_ALIGNMENT.get(cross['alignment'], cross['alignment'])}"
    if not cross["compared"]:
        # Nothing to compare is not a zero difference: say why instead of printing "None".
        period = meta.get("schedtrace_ms")
        span = cross.get("trace_span_ns")
        why = f"the trace lasted {span / 1e6:.1f} ms" if span is not None else "the trace holds no events"
        return (
            f"  cross-check with the trace: no schedtrace sample fell inside the trace ({why}; "
            f"schedtrace prints every {period} ms), so runqueue and idle Ps were not compared"
        )
    return (
        f"  cross-check with the trace: {cross['compared']} samples, runqueue disagrees in "
        f"{cross['runqueue_mismatches']}, idleprocs in {cross['idleprocs_mismatches']} "
        f"within each sample's millisecond (at the sampled instant: mean |Δ| "
        f"{cross['runqueue_mean_abs_diff']} / {cross['idleprocs_mean_abs_diff']}; {clocks})"
    )
