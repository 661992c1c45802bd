"""--lab DIR of the trace commands (timeline, export, sql): a `lab observe` folder's records.

Kept apart from goblueprint.lab.views so that building the parser imports nothing heavy.
"""

from __future__ import annotations

import argparse

LAB_HELP = (
    "a `lab observe` folder: add its records (run-queue counters under each P, steal flows, "
    "sysmon marks; tables lab_records, lab_steals, lab_queues, lab_sysmon)"
)


def add_lab_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lab", metavar="DIR", help=LAB_HELP)
