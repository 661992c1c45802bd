"""goblueprint binary crosscheck"""

from __future__ import annotations

import argparse

HELP = "check DWARF structs, constants and scheduler call edges of a binary against the Go source"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("binary", metavar="BIN", help="a Go ELF binary with DWARF")
    parser.add_argument("--goroot", metavar="DIR", help="GOROOT of the source (default: the toolchain of the "
                        "binary's Go release)")  # fmt: skip
    parser.add_argument("--all", action="store_true", help="also list agreeing edges")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from goblueprint import toolchain
    from goblueprint.binary import text
    from goblueprint.binary.crosscheck import crosscheck
    from goblueprint.binary.session import open_all
    from goblueprint.errors import BinaryError, ToolchainError
    from goblueprint.source import facts as source_facts

    opened = open_all(args.binary, need_dwarf=True)
    goroot = args.goroot
    if goroot is None:
        version = opened.binary.go_version
        if not version:
            raise BinaryError(f"{args.binary}: Go release unknown; give --goroot DIR")
        try:
            goroot = str(toolchain.find(".".join(version.split(".")[:2])).goroot)
        except ToolchainError as exc:
            raise BinaryError(f"{exc} (or give --goroot DIR)") from exc
    # (crosscheck has no --go: without --goroot it takes the binary's own release)
    instead = "leave --goroot out to check against the source of the binary's own Go release"
    facts = source_facts.load(source_facts.resolve(goroot, instead=instead))
    rec = crosscheck(opened, facts)
    print(text.dumps(rec) if args.json else text.crosscheck(rec, show_all=args.all))
    return 0
