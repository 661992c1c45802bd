"""goblueprint trace dump: Go's ``go tool trace -d=parsed``, byte for byte."""

from __future__ import annotations

import argparse
import sys

from goblueprint.cli._partial import add_trace_argument, finish, open_input_trace

HELP = "print every event of a Go execution trace as `go tool trace -d=parsed` does"

# Flush after this many characters: bounded memory, few write calls.
_CHUNK = 1 << 20


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_trace_argument(parser, "execution trace file (Go 1.22 or newer)")


def run(args: argparse.Namespace) -> int:
    from goblueprint.errors import TraceError

    reader = open_input_trace(args.trace)
    # Bytes out: trace strings are raw bytes (kept as surrogate escapes), printed as Go prints them.
    out = sys.stdout.buffer
    parts: list[str] = []
    size = 0
    try:
        for ev in reader:
            s = ev.string()
            parts.append(s)
            size += len(s)
            if size >= _CHUNK:
                parts.append("")
                out.write("\n".join(parts).encode("utf-8", "surrogateescape"))
                parts = []
                size = 0
    except TraceError as err:
        # Print what Go would have printed before failing, then the error on one line.
        _flush(out, parts)
        lines = err.message.splitlines() or [""]
        raise TraceError(lines[0], offset=err.offset, generation=err.generation, m=err.m) from None
    _flush(out, parts)
    return finish(reader, args, f"printed the {reader.events_read} events before it, as Go does")


def _flush(out, parts: list[str]) -> None:
    if parts:
        parts.append("")
        out.write("\n".join(parts).encode("utf-8", "surrogateescape"))
    out.flush()
