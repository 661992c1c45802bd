"""goblueprint capture: record a Go program or test under the tracer and schedtrace."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from goblueprint.cli._program_args import add_program_arguments, add_record_arguments, program_command

if TYPE_CHECKING:
    from goblueprint.capture.run import CaptureResult

HELP = "record a Go program or test (go test …, go run …, a main package, a binary) under the tracer"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o", "--out", default="capture-out", metavar="DIR", help="output folder (default ./capture-out)"
    )
    parser.add_argument(
        "--schedtrace",
        type=int,
        default=100,
        metavar="MS",
        help="schedtrace period in ms, 0 for none (default 100)",
    )
    parser.add_argument("--scheddetail", action="store_true", help="also print P, M and G detail lines")
    parser.add_argument("--json", action="store_true", help="print meta.json instead of the summary")
    add_record_arguments(parser)
    add_program_arguments(parser)


def summarize(result: CaptureResult, *, crosscheck: bool = True) -> str:
    """The one-screen summary from meta.json, schedtrace.log and (if readable) the trace."""
    from goblueprint.capture import schedtrace, schedtrace_analysis, summary
    from goblueprint.errors import GoblueprintError

    sched_summary = None
    hints: list = []
    cross = None
    parsed = None
    if result.schedtrace is not None and result.schedtrace.exists():
        parsed = schedtrace.parse(result.schedtrace.read_text(errors="replace"), lenient=True)
        sched_summary = schedtrace_analysis.summary(parsed)
        hints = schedtrace_analysis.hints(parsed)
    notes_extra = []
    if crosscheck and parsed is not None and parsed.samples and result.trace is not None:
        try:
            from goblueprint.capture.crosscheck import clock_origin, compare
            from goblueprint.trace.reader import open_trace

            cross = compare(open_trace(result.trace), parsed, clock_origin(result.out_dir))
        except ImportError:
            notes_extra.append("cross-check skipped: the trace reader is not available")
        except GoblueprintError as exc:
            notes_extra.append(f"cross-check stopped: {exc}")
    text = summary.render(result.out_dir, result.meta, sched_summary, hints, cross)
    return "\n".join([text, *(f"  note: {n}" for n in notes_extra)])


def run(args: argparse.Namespace) -> int:
    import json

    from goblueprint.capture import capture_all
    from goblueprint.cli._paths import output_dir

    command = program_command(args, "goblueprint capture [options] -- COMMAND ...")

    def report(result: CaptureResult) -> None:
        # Printed as each package ends, so a long ./... run shows progress.
        if args.json:
            return  # one JSON document at the end
        if result.skipped == "build failed":
            print(f"FAIL\t{result.meta['package']} [build failed]", flush=True)
        elif result.skipped:
            print(f"?   \t{result.meta['package']}\t[{result.skipped}]", flush=True)
        else:
            print(summarize(result), flush=True)

    results = capture_all(
        command,
        output_dir(args.out),
        schedtrace_ms=args.schedtrace,
        scheddetail=args.scheddetail,
        procs=args.procs,
        go=args.go,
        timeout=args.timeout,
        kernel=args.kernel or args.locks,
        locks=args.locks,
        perf=args.perf,
        on_result=report,
    )
    if args.json:
        # One package: its meta.json as before; several: the list, packages without tests included.
        metas = [r.meta for r in results]
        print(json.dumps(metas[0] if len(metas) == 1 else metas, sort_keys=True, indent=2))
    failed = [r for r in results if not r.ok]
    for result in failed:
        if result.skipped == "build failed":
            print(f"goblueprint: error: {result.meta['error']}", file=sys.stderr)
            continue
        print(
            f"goblueprint: the program failed ({result.meta['error']}); what was recorded is in {result.out_dir}",
            file=sys.stderr,
        )
    if any(r.meta.get("interrupted") for r in results):
        return 130
    return 1 if failed else 0
