"""goblueprint lab sysmon: sysmon's wake-ups and what it did."""

from __future__ import annotations

import argparse

HELP = "sysmon's tick intervals and actions (preemptions, P retakes, netpoll) from a lab run"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="a `lab observe` output folder")
    parser.add_argument("--json", action="store_true", help='print {"ticks", "actions", "summary"}')


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from goblueprint.cli._lab_common import load_frame
    from goblueprint.lab.sysmon import sysmon

    _table, frame = load_frame(args.dir, notes=not args.json)
    data = sysmon(frame)
    if args.json:
        sys.stdout.write(json.dumps(data, sort_keys=True) + "\n")
        return 0
    s = data["summary"]
    print(f"sysmon: {s['wakeups']} wake-ups on {s['threads']} thread(s)")
    if s["wakeups"]:
        print(f"  asked to sleep {s['delay_us_min']}–{s['delay_us_max']} µs; interval p50 "
              f"{(s['interval_ns_p50'] or 0) / 1e3:.1f} µs, max {(s['interval_ns_max'] or 0) / 1e6:.2f} ms")  # fmt: skip
    print(
        f"  preemptions {s['preemptions']}, P retakes {s['retakes']}, goroutines netpolled {s['netpolled']}"
    )
    t0 = int(frame["t"].min()) if frame.height else 0
    for a in data["actions"]:
        what = ", ".join(f"{k} {v}" for k, v in a.items() if k not in ("t", "action"))
        print(f"  +{(a['t'] - t0) / 1e6:10.3f} ms  {a['action']:<8} {what}")
    return 0
