"""Scheduler constants a lab build can change, read from the release's source.

Each knob is found by the Go helper (knobs.go) through the AST: a named constant,
or a constant that one function assigns to, compares with, takes the modulus by,
multiplies with, or returns. Every expression that plays the same part with the
same value belongs to it, so a change moves them together (sysmon assigns its
minimum delay in two places). Types and ranges guard against values that would
break the runtime rather than change it (a zero modulus divides by zero).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from goblueprint import toolchain
from goblueprint.errors import LabError
from goblueprint.source import facts as source_facts
from goblueprint.source import helper, tables


@dataclass(frozen=True)
class Knob:
    name: str
    func: str  # "" for a package-level constant
    pattern: str  # const, assign, compare, mod, mul, return
    var: str
    kind: str  # "int" or "bool"
    low: int
    high: int
    what: str
    index: int = 0

    def spec(self, value: str = "") -> dict[str, Any]:
        return {"name": self.name, "func": self.func, "pattern": self.pattern, "var": self.var,
                "index": self.index, "set": value}  # fmt: skip


KNOBS = (
    Knob("forcePreemptNS", "", "const", "forcePreemptNS", "int", 1_000, 10**12,
         "sysmon preempts a G that has run this long (ns)"),
    Knob("sysmon_min_sleep_us", "sysmon", "assign", "delay", "int", 1, 10**6,
         "sysmon's sleep while it finds work (µs)"),
    Knob("sysmon_max_sleep_us", "sysmon", "compare", "delay", "int", 1, 10**7,
         "the longest sleep sysmon doubles up to (µs)"),
    Knob("sysmon_idle_ticks", "sysmon", "compare", "idle", "int", 0, 10**6,
         "idle ticks after which sysmon starts doubling its sleep"),
    Knob("global_queue_tick", "findRunnable", "mod", "schedtick", "int", 1, 10**6,
         "every Nth schedule takes from the global queue first (fairness)"),
    Knob("steal_tries", "stealWork", "const", "stealTries", "int", 1, 1000,
         "rounds over all Ps a spinning M makes looking for work to steal"),
    Knob("spinning_factor", "findRunnable", "mul", "nmspinning", "int", 1, 1024,
         "an M may spin only while FACTOR × spinning Ms < busy Ps"),
    Knob("runnext_inherits_time", "runqget", "return", "next", "bool", 0, 1,
         "a G taken from runnext inherits the time slice", index=1),
)  # fmt: skip
BY_NAME = {k.name: k for k in KNOBS}
_FORMAT = 1


def read(root: source_facts.Goroot) -> list[dict[str, Any]]:
    """Each knob with its value and sites in ROOT (file:line), or why it is missing."""
    digest = hashlib.sha256(
        json.dumps(
            [_FORMAT, helper.helper_source_hash(), str(root.path), root.version, [k.spec() for k in KNOBS]]
        ).encode()
    ).hexdigest()[:20]
    path = toolchain.cache_dir() / "lab" / f"knobs-go{root.version}-{digest}.json"
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        path.parent.mkdir(parents=True, exist_ok=True)
        spec = path.with_suffix(f".spec.{os.getpid()}")
        spec.write_text(json.dumps({"knobs": [k.spec() for k in KNOBS]}))
        try:
            found = helper.run_helper("knobs", root.path, ["-pkg", tables.PACKAGE, "-spec", str(spec)])
        finally:
            spec.unlink(missing_ok=True)
        tmp = path.with_suffix(f".tmp.{os.getpid()}")
        tmp.write_text(json.dumps(found))
        tmp.replace(path)
    out = []
    for knob, got in zip(KNOBS, found, strict=True):
        sites = got["sites"]
        values = sorted({s["value"] for s in sites})
        out.append(
            {
                "name": knob.name,
                "value": values[0] if len(values) == 1 else None,
                "type": knob.kind,
                "range": [knob.low, knob.high],
                "what": knob.what,
                "sites": [{"file": s["file"], "line": s["line"], "text": s["text"]} for s in sites],
                "missing": got.get("reason") or None,
            }
        )
    return out


def parse_settings(items: list[str], available: list[dict[str, Any]]) -> dict[str, str]:
    """NAME=VALUE pairs, checked against each knob's type and range; a one-line LabError otherwise."""
    by_name = {k["name"]: k for k in available}
    out: dict[str, str] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep:
            raise LabError(f"--knob {item}: expected NAME=VALUE")
        knob = BY_NAME.get(name)
        if knob is None:
            raise LabError(f"unknown knob {name!r} (known: {', '.join(BY_NAME)})")
        if by_name.get(name, {}).get("missing"):
            raise LabError(f"knob {name} cannot be set in this release: {by_name[name]['missing']}")
        if knob.kind == "bool":
            if text not in ("true", "false"):
                raise LabError(f"knob {name} is a bool: true or false, not {text!r}")
            out[name] = text
            continue
        try:
            value = int(text.replace("_", ""), 0)
        except ValueError:
            raise LabError(f"knob {name} is an integer, not {text!r}") from None
        if not knob.low <= value <= knob.high:
            raise LabError(f"knob {name}={value} is out of range [{knob.low}, {knob.high}]")
        out[name] = str(value)
    return out
