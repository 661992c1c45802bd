"""goblueprint binary disasm"""

from __future__ import annotations

import argparse

HELP = "disassemble one function, targets symbolized, source file:line (inlining too) interleaved"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("binary", metavar="BIN", help="a Go ELF binary (amd64 or arm64)")
    parser.add_argument("function", metavar="FUNC", help="a function symbol, e.g. runtime.schedule")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from goblueprint.binary import text
    from goblueprint.binary.disasm import disassemble
    from goblueprint.binary.session import open_all

    opened = open_all(args.binary, warn=not args.json)
    listing = disassemble(opened.binary, opened.symbols, opened.dwarf, args.function)
    print(text.dumps(listing) if args.json else text.disasm(listing))
    return 0
