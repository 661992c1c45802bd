"""goblueprint demo: record the bundled workload and write every view into one folder."""

from __future__ import annotations

import argparse

HELP = "record the bundled Go workload and write every view (timeline, metrics, states, …) into one folder"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o", "--out", default="blueprint-out", metavar="DIR", help="output folder (default ./blueprint-out)"
    )
    parser.add_argument(
        "--go", metavar="VERSION", help="Go release to build the workload with (default: bundled)"
    )
    parser.add_argument("--procs", type=int, metavar="N", help="run the workload with GOMAXPROCS=N")
    parser.add_argument("--scale", type=float, default=1.0, help="amount of work (default 1)")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated views to write (e.g. timeline.html)")
    parser.add_argument(
        "--all", action="store_true", help="also write the extra formats (SVG timeline, Chrome JSON, ...)"
    )
    parser.add_argument(
        "-j", "--jobs", type=int, metavar="N", help="views made in parallel (default: CPUs, at most 4)"
    )
    parser.add_argument(
        "--schedtrace", type=int, default=50, metavar="MS", help="schedtrace period (default 50)"
    )


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.capture import capture, demo
    from goblueprint.cli._paths import output_dir
    from goblueprint.cli.capture import summarize
    from goblueprint.errors import UsageError

    if args.scale <= 0:
        raise UsageError("--scale must be positive")
    only = None
    if args.only:
        only = {name.strip() for name in args.only.split(",") if name.strip()}
        unknown = only - {step.name for step in demo.STEPS}
        if unknown:
            known = ", ".join(step.name for step in demo.STEPS)
            raise UsageError(f"--only: unknown view {', '.join(sorted(unknown))} (views: {known})")
    out_dir = output_dir(args.out).resolve()
    cap_dir = out_dir / "capture"
    print(f"goblueprint demo: recording the bundled workload ({demo.WORKLOAD_DIR}) …", flush=True)
    result = capture(
        ["go", "run", ".", f"-scale={args.scale}"],
        cap_dir,
        schedtrace_ms=args.schedtrace,
        procs=args.procs,
        go=args.go,
        timeout=120,
        cwd=demo.WORKLOAD_DIR,
        no_stdin=True,
    )
    text = summarize(result)
    print(text)
    if result.trace is None:
        print(f"goblueprint: the workload left no trace ({result.meta['error']})", file=sys.stderr)
        return 1

    # Cross-check, when the trace reader exists, as a JSON artefact of its own.
    cross_files = []
    if result.schedtrace is not None:
        from goblueprint.capture import schedtrace
        from goblueprint.errors import GoblueprintError

        try:
            from goblueprint.capture.crosscheck import clock_origin, compare
            from goblueprint.trace.reader import open_trace

            parsed = schedtrace.parse(result.schedtrace.read_text(errors="replace"), lenient=True)
            cross = compare(open_trace(result.trace), parsed, clock_origin(result.out_dir))
            (cap_dir / "crosscheck.json").write_text(json.dumps(cross, sort_keys=True, indent=1) + "\n")
            cross_files.append("capture/crosscheck.json")
        except (ImportError, GoblueprintError) as exc:
            print(f"  note: no cross-check: {exc}")

    values = {
        "trace": str(result.trace),
        "schedtrace": str(result.schedtrace) if result.schedtrace else None,
        "binary": str(cap_dir / result.meta["files"]["binary"])
        if result.meta["files"].get("binary")
        else None,
        "go": result.meta["go_version"],
    }
    print(f"writing views into {out_dir}/")

    def progress(r: demo.StepResult) -> None:
        mark = {"ok": "✓", "skipped": "–", "failed": "✗"}[r.status]
        detail = f"  ({r.seconds:.1f}s)" if r.status == "ok" else f"  {r.status}: {r.message}"
        print(f"  {mark} {r.step.name:<22}{detail}", flush=True)

    import os

    jobs = args.jobs if args.jobs is not None else min(4, os.cpu_count() or 1)
    results = demo.run_steps(out_dir, values, progress, jobs=max(1, jobs), extra=args.all, only=only)
    capture_files = [
        f"capture/{name}"
        for name in ("meta.json", "trace.out", "schedtrace.log")
        if (cap_dir / name).exists()
    ]
    index = out_dir / "index.html"
    index.write_text(
        demo.index_html("goblueprint demo", text, results, capture_files + cross_files, out_dir),
        encoding="utf-8",
    )
    ok = sum(r.status == "ok" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    failed = sum(r.status == "failed" for r in results)
    print(f"{ok} views written, {skipped} skipped, {failed} failed")
    print(f"open {index}")
    if failed:
        print(f"goblueprint: {failed} views failed; see {index}", file=sys.stderr)
    return 0 if result.ok and not failed else 1
