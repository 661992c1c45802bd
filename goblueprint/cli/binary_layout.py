"""goblueprint binary layout"""

from __future__ import annotations

import argparse

HELP = "a type's size and fields (offset, size, type) from DWARF, with padding holes"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("binary", metavar="BIN", help="a Go ELF binary with DWARF")
    parser.add_argument("type", metavar="TYPE", help="a type name, e.g. runtime.g (runtime. may be omitted)")
    parser.add_argument("--expand", action="store_true", help="follow nested structs (paths like sched.sp)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from goblueprint.binary import text
    from goblueprint.binary.layout import layout
    from goblueprint.binary.session import open_all

    opened = open_all(args.binary, need_dwarf=True)
    if opened.dwarf is None:  # open_all raised already; this keeps the type checker informed
        return 1
    rec = layout(opened.dwarf, args.type, expand=args.expand)
    print(text.dumps(rec) if args.json else text.layout(rec))
    return 0
