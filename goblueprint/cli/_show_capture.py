"""The --show-capture flag shared by the trace views (see goblueprint.timeline.capture_marks)."""

from __future__ import annotations

import argparse


def add_show_capture_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--show-capture",
        action="store_true",
        help="keep the goroutines and frames goblueprint capture added to the program (left out by default)",
    )
