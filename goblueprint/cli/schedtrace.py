"""goblueprint schedtrace: read GODEBUG=schedtrace/scheddetail output as data."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from goblueprint.cli._partial import add_partial_flag, finish, open_input_trace
from goblueprint.cli._paths import input_file, output_file, output_format, reading, writing

if TYPE_CHECKING:
    from goblueprint.trace.reader import Reader

PLOT_FORMATS = {".svg": "svg", ".png": "png", ".html": "html"}
HELP = "read schedtrace/scheddetail output (Go 1.21-1.27): JSON, time series, plots, hints"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG", help="schedtrace log (e.g. schedtrace.log of a capture)")
    parser.add_argument("--json", action="store_true", help="print the samples as JSON")
    parser.add_argument("--plot", metavar="OUT", help="write a plot: OUT.svg, OUT.png or OUT.html")
    parser.add_argument(
        "--trace", metavar="TRACE", help="execution trace of the same run: compare runqueue/idleprocs with it"
    )
    add_partial_flag(parser)
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="skip lines that are not the runtime's (a raw stderr) instead of failing",
    )


def run(args: argparse.Namespace) -> int:
    import json

    from goblueprint.capture import schedtrace, schedtrace_analysis
    from goblueprint.errors import CaptureError

    path = input_file(args.log)
    plot = None
    if args.plot:
        plot = output_file(args.plot)
        output_format(plot, PLOT_FORMATS, what="a plot")
    reader = open_input_trace(args.trace) if args.trace else None
    with reading(path):
        data = path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    if b"\0" in data or text.count("\ufffd") * 10 > len(text):
        # A trace, a binary: quoting its first "line" would print raw bytes.
        raise CaptureError(
            f"{path}: binary data, not a schedtrace log (the text GODEBUG=schedtrace=MS prints)"
        )
    try:
        parsed = schedtrace.parse(text, lenient=args.lenient)
    except CaptureError as exc:
        raise CaptureError(f"{path}: {exc} (use --lenient to skip foreign lines)") from exc
    if not parsed.samples:
        raise CaptureError(f"{path}: no SCHED lines")
    hints = schedtrace_analysis.hints(parsed)
    if plot is not None:
        from goblueprint.capture import schedtrace_plot

        with writing(plot):
            schedtrace_plot.write(parsed, hints, plot, title=f"schedtrace: {path.name}")
    cross = None
    if reader is not None:
        from goblueprint.capture.crosscheck import clock_origin, compare

        # The process start capture measured, from the meta.json beside the log.
        cross = compare(reader, parsed, clock_origin(path.parent))
    if args.json:
        doc = parsed.to_json()
        doc["hints"] = [h.to_json() for h in hints]
        if cross is not None:
            doc["crosscheck"] = cross
        print(json.dumps(doc, sort_keys=True))
        return _status(reader, args)
    frame = schedtrace_analysis.samples_frame(parsed)
    stats = schedtrace_analysis.summary(parsed)
    print(
        f"{path}: {stats['samples']} samples over {stats['span_ms']} ms"
        f"{' (scheddetail)' if parsed.detailed else ''}"
        f"{f', {parsed.skipped_lines} foreign lines skipped' if parsed.skipped_lines else ''}"
        f"{', the last sample left out (cut by the program exiting while the runtime printed it)' if parsed.cut_last_sample else ''}"
    )
    import polars as pl

    with pl.Config(
        tbl_rows=12,
        tbl_cols=12,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        tbl_width_chars=160,
    ):
        print(frame.drop([c for c in frame.columns if frame[c].null_count() == frame.height]))
    for hint in hints:
        print(f"hint: {hint.message}")
    if not hints:
        print("hints: none")
    if cross is not None:
        print(
            f"cross-check with {args.trace} (clocks: {cross['alignment']}): {cross['compared']} samples compared, "
            f"runnable disagrees in {cross['runqueue_mismatches']}, idle Ps in {cross['idleprocs_mismatches']}"
            " (within each sample's millisecond window)"
        )
        for row in cross["rows"]:
            if row["runnable_agrees"] is False or row["idleprocs_agrees"] is False:
                lo_r, hi_r = row["trace_runnable_range"]
                lo_i, hi_i = row["trace_idleprocs_range"]
                print(
                    f"  {row['t_ms']:>7} ms  runnable sched {row['sched_runnable']} trace {lo_r}..{hi_r}"
                    f"  ·  idle Ps sched {row['sched_idleprocs']} trace {lo_i}..{hi_i}"
                )
    if args.plot:
        print(f"plot: {args.plot}")
    return _status(reader, args)


def _status(reader: Reader | None, args: argparse.Namespace) -> int:
    if reader is None:
        return 0
    return finish(reader, args, f"the cross-check covers the {reader.events_read} events before it")
