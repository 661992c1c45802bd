"""When G and P states disappeared across releases, built with the diff machinery and shipped as data.

`verify` against a release that lacks a drawn state says which release removed (or renamed) it.
The data (`state_history.json`) is regenerated from installed toolchains with
`python -m goblueprint.source.history`; a test rebuilds it from the releases installed there and
compares.
"""

from __future__ import annotations

import itertools
import json
import sys
from importlib import resources
from typing import Any

from goblueprint.source import diff, states, tables

_DATA = "state_history.json"


def release_key(version: str) -> tuple[int, ...]:
    """(1, 26) for "1.26.6" or "go1.26": states change only between minor releases."""
    parts = version.removeprefix("go").split(".")
    try:
        return tuple(int(p) for p in parts[:2])
    except ValueError:
        return (0,)


def build(releases: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """RELEASES: (version, facts) pairs.  Each removal is attributed to the first release without it."""
    ordered = sorted(releases, key=lambda r: release_key(r[0]))
    out: dict[str, Any] = {
        "releases": [".".join(map(str, release_key(v))) for v, _ in ordered],
        "machines": {m: {} for m in tables.MACHINES},
    }
    for (va, fa), (vb, fb) in itertools.pairwise(ordered):
        for m in tables.MACHINES:
            change = diff.state_changes(states.blueprint(fa, m), states.blueprint(fb, m))
            became = {r["from"]: r["to"] for r in change["renamed"]}
            for name in change["removed"]:
                out["machines"][m][name] = {
                    "last_seen": ".".join(map(str, release_key(va))),
                    "removed_in": ".".join(map(str, release_key(vb))),
                    "became": became.get(name),
                }
    return out


def shipped() -> dict[str, Any]:
    return json.loads((resources.files("goblueprint.source") / _DATA).read_text())


def removal(
    machine: str, name: str, version: str, data: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """How NAME left MACHINE's states at or before VERSION, or None."""
    entry = (data or shipped())["machines"].get(machine, {}).get(name)
    if entry and release_key(entry["removed_in"]) <= release_key(version):
        return {"state": name, **entry}
    return None


def _main() -> int:
    from goblueprint import toolchain
    from goblueprint.source import facts

    newest: dict[tuple[int, ...], toolchain.Toolchain] = {}
    for tc in toolchain.available():
        key = release_key(tc.version)
        if key not in newest or toolchain.parse_version(tc.version) > toolchain.parse_version(
            newest[key].version
        ):
            newest[key] = tc
    releases = [(tc.version, facts.load(facts.Goroot(tc.goroot, tc.version))) for tc in newest.values()]
    data = build(releases)
    target = resources.files("goblueprint.source") / _DATA
    with resources.as_file(target) as path:
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
