"""goblueprint trace view: the timeline viewer served from 127.0.0.1, detail read on demand."""

from __future__ import annotations

import argparse
import ipaddress
import signal
import sys
from pathlib import Path

from goblueprint.cli._partial import add_trace_argument, finish
from goblueprint.errors import UsageError

HELP = "serve the interactive timeline of a trace on 127.0.0.1, its detail read from the ingested tables"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_trace_argument(parser, "execution trace file (Go 1.22 or newer)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default 0: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--allow-remote", action="store_true",
        help="listen on a --host that is not a loopback address (anyone who reaches it sees the trace)",
    )  # fmt: skip
    parser.add_argument(
        "--title", default=None, help="title shown in the page (default: the trace file name)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print one line per request")
    parser.description = (
        "Serves the page of `trace timeline` holding only the coarsest level of detail; the page "
        "asks the server for the spans or finer levels of the lanes and window on screen, which "
        "it reads from the trace's ingested tables (made on first use), so memory stays bounded "
        "by what is on screen, not by the trace. Ctrl-C stops it."
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: give 0 (any free port) to 65535")
    if not _loopback(args.host) and not args.allow_remote:
        raise UsageError(
            f"--host {args.host} is not a loopback address: the trace would be served to the network "
            "(add --allow-remote if that is meant)"
        )
    from goblueprint.cli._ingested import ingested_trace
    from goblueprint.render.serve import ViewServer, prepare

    found = ingested_trace(args.trace)
    status = finish(found, args, f"the view covers the {found.events_read} events before it")
    if status:
        return status
    title = args.title if args.title is not None else Path(args.trace).name
    view = prepare(found, title)
    try:
        server = ViewServer(view, args.host, args.port, verbose=args.verbose)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    # Ctrl-C even when started from a shell that ignores it in the background, and `kill`
    # (SIGTERM), both stop the server the same clean way.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    with server:
        print(f"goblueprint: serving the timeline of {Path(args.trace).name} at {server.url} (Ctrl-C stops)")
        sys.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("goblueprint: stopped", file=sys.stderr)
    return 0
