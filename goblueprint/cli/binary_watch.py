"""goblueprint binary watch"""

from __future__ import annotations

import argparse

HELP = "run a Go program under gdb and record M, G switched to and registers at scheduler functions"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("binary", metavar="BIN", help="a Go amd64/arm64 ELF binary with DWARF, runnable here")
    _options(parser)
    parser.add_argument(
        "args", nargs=argparse.REMAINDER, metavar="-- ARGS",
        help="arguments of the program (if the first is one of the watch options, write -- -- ARGS)",
    )  # fmt: skip


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--at", action="append", metavar="FUNC",
                        help="break at this function's entry (repeatable; default runtime.execute)")  # fmt: skip
    parser.add_argument("--count", type=int, default=20, metavar="N", help="stop after N hits (default 20)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait for each hit (default 60)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per hit (JSON lines)")


_OPTION_NAMES = frozenset(("--at", "--count", "--timeout", "--json"))


def _g(info: dict | None) -> str:
    return "-" if info is None else f"{info['goid']}/{info['status']}"


def run(args: argparse.Namespace) -> int:
    import json

    from goblueprint.binary.watch import watch
    from goblueprint.cli._paths import input_file
    from goblueprint.errors import UsageError

    # argparse hands everything after BIN to the REMAINDER positional, so options
    # written after BIN (the documented order) are parsed here, up to "--".  A "--"
    # right after BIN is dropped by argparse itself: then no watch option leads.
    rest = list(args.args)
    if "--" in rest:
        cut = rest.index("--")
        options, prog_args = rest[:cut], rest[cut + 1 :]
    elif rest and rest[0].split("=", 1)[0] in _OPTION_NAMES:
        options, prog_args = rest, []
    else:
        options, prog_args = [], rest
    if options:
        sub = argparse.ArgumentParser(prog="goblueprint binary watch BIN", add_help=False)
        _options(sub)
        try:
            extra, unknown = sub.parse_known_args(options)
        except SystemExit as exc:
            raise UsageError(f"bad watch options: {' '.join(options)}") from exc
        if unknown:
            raise UsageError(f"unexpected arguments {' '.join(unknown)} (program arguments go after --)")
        for key, value in vars(extra).items():
            default = sub.get_default(key)
            if value != default:
                setattr(args, key, (getattr(args, key) or []) + value if key == "at" else value)
    if args.count < 1:
        raise UsageError("--count must be at least 1")
    input_file(args.binary)
    at = args.at or ["runtime.execute"]
    hits = watch(args.binary, at, count=args.count, args=prog_args, timeout=args.timeout)
    if not args.json:
        print(f"{'HIT':>4} {'FUNCTION':<22} {'THR':>4} {'LWP':>7} {'M':>3} {'G':<14} {'M.CURG':<16} "
              f"{'SWITCH_TO':<16} {'RSP':>14} {'RBP':>14} {'RIP':>10}")  # fmt: skip
    for rec in hits:
        if args.json:
            print(json.dumps(rec, sort_keys=True), flush=True)
        else:
            print(f"{rec['hit']:>4} {rec['function']:<22} {rec['thread']:>4} {rec['lwp'] or '-':>7} "
                  f"{'-' if rec['m'] is None else rec['m']:>3} {_g(rec['g']):<14} {_g(rec['curg']):<16} "
                  f"{_g(rec.get('switch_to')):<16} {rec['rsp']:>#14x} {rec['rbp']:>#14x} {rec['rip']:>#10x}",
                  flush=True)  # fmt: skip
    return 0
