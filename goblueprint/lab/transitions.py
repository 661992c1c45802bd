"""Observed status edges: how often each (from, to) happened at each site.

A record of a wrapper site (casgstatus, castogscanstatus, ...) is attributed to
the call of the wrapper (its caller PC, symbolized at observe time), which is
where the source layer puts the transition too; other sites are their own place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from goblueprint.errors import LabError
from goblueprint.lab.records import Dump
from goblueprint.source import states as source_states
from goblueprint.source import tables


def state_names(facts: dict[str, Any], machine: str) -> dict[int, str]:
    names: dict[int, str] = {}
    for s in source_states.states_of(facts, source_states.machine_of(machine)):
        names.setdefault(s.value, s.name)
    return names


def transitions(
    table: dict[str, Any], dump: Dump, facts: dict[str, Any], machine: str
) -> list[dict[str, Any]]:
    """{"from", "to", "function", "file", "line", "count"} per observed edge and place."""
    if machine not in tables.MACHINES:
        raise LabError(f"unknown machine {machine!r} (choose from: {', '.join(tables.MACHINES)})")
    kind = f"{machine}_status"
    sites = {s["id"]: s for s in table["sites"] if s["kind"] == kind}
    recs = dump.records
    mine = recs[np.isin(recs["site"], np.array(sorted(sites), dtype=np.uint32))]
    wrapper_ids = np.array(sorted(i for i, s in sites.items() if s["wrapper"]), dtype=np.uint32)
    # The caller PC only distinguishes places for wrapper sites; elsewhere it is 0 anyway.
    pc = np.where(np.isin(mine["site"], wrapper_ids), mine["c"], 0)
    keys = np.empty(len(mine), dtype=[("site", "<u4"), ("pc", "<u8"), ("a", "<u8"), ("b", "<u8")])
    keys["site"], keys["pc"], keys["a"], keys["b"] = mine["site"], pc, mine["a"], mine["b"]
    uniq, counts = np.unique(keys, return_counts=True)
    names = state_names(facts, machine)
    callers = table.get("callers", {})
    merged: dict[tuple, int] = {}
    for key, count in zip(uniq, counts, strict=True):
        site = sites[int(key["site"])]
        func, file, line = site["function"], site["file"], site["line"]
        if site["wrapper"]:
            where = callers.get(str(int(key["pc"])))
            if where is not None:
                func, file, line = where
        edge = (
            names.get(int(key["a"]), hex(int(key["a"]))),
            names.get(int(key["b"]), hex(int(key["b"]))),
            func,
            file,
            line,
        )
        merged[edge] = merged.get(edge, 0) + int(count)
    rows = [
        {"from": e[0], "to": e[1], "function": e[2], "file": e[3], "line": e[4], "count": n}
        for e, n in merged.items()
    ]
    rows.sort(key=lambda r: (-r["count"], r["from"], r["to"], r["file"], r["line"], r["function"]))
    return rows


def observed_transitions(directory: str | Path, machine: str) -> list[dict[str, Any]]:
    """The edges a `lab observe` folder saw, for the source layer to check its blueprint against.

    Rows are ``{"from", "to", "function", "file", "line", "count"}`` (the shape of
    ``source verify --observed``'s ``transitions.json``), states named as the release's
    source names them, places as file:line of that release. The release is the one the
    folder was built with (``lab.json``), so its facts are resolved here.

    Raises LabError for a folder that is not a lab run, has no records, or an unknown machine.
    """
    from goblueprint.lab import records
    from goblueprint.source import facts as source_facts

    if machine not in tables.MACHINES:
        raise LabError(f"unknown machine {machine!r} (choose from: {', '.join(tables.MACHINES)})")
    table, dump = records.load(Path(directory))
    version = table.get("go_version")
    if not version:
        raise LabError(f"{directory}: {records.SITES_FILE} names no Go release")
    root = source_facts.resolve(go=version)
    return transitions(table, dump, source_facts.load(root), machine)
