"""goblueprint binary calls"""

from __future__ import annotations

import argparse

HELP = "the call sites of one function: direct targets symbolized, indirect calls marked"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("binary", metavar="BIN", help="a Go ELF binary (amd64 or arm64)")
    parser.add_argument("function", metavar="FUNC", help="a function symbol, e.g. runtime.schedule")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from goblueprint.binary import text
    from goblueprint.binary.disasm import calls, disassemble
    from goblueprint.binary.session import open_all

    opened = open_all(args.binary, warn=not args.json)
    rec = calls(disassemble(opened.binary, opened.symbols, opened.dwarf, args.function))
    print(text.dumps(rec) if args.json else text.calls(rec))
    return 0
