"""Arguments shared by the `goblueprint source ...` commands."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_goroot_args(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--goroot", metavar="DIR", help="read this GOROOT")
    where.add_argument(
        "--go", metavar="VERSION", help="read the GOROOT of this installed release (e.g. 1.22)"
    )


def load_facts(args: argparse.Namespace) -> dict[str, Any]:
    from goblueprint.source import facts

    return facts.load(facts.resolve(goroot=args.goroot, go=args.go))


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, sort_keys=True, indent=2) + "\n")
