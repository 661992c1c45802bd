"""Transitions seen at run time (the lab's records), as evidence for `source verify --observed DIR`.

The interface is one JSON file, DIR/transitions.json, in the shape `lab transitions --json` prints:

    {"machine": "g" | "p",
     "transitions": [{"from": "_Prunning", "to": "_Pidle", "function": "releasepNoTrace",
                      "file": "src/runtime/proc.go", "line": 6402, "count": 12}, ...]}

Any producer that writes this file can feed `verify`; a `lab observe` folder itself needs no such
file (its records are read through the lab's API). `observed_edges` below is the reader and
`apply` the only place observations change verdicts.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goblueprint.errors import PathError, SourceError

FILE_NAME = "transitions.json"
LAB_SITES_FILE = "lab.json"  # what marks a `lab observe` folder (goblueprint.lab.records.SITES_FILE)


@dataclass(frozen=True)
class ObservedEdge:
    machine: str
    src: str
    dst: str
    function: str
    file: str
    line: int
    count: int


def parse(data: bytes, where: str) -> tuple[str, list[ObservedEdge]]:
    """Read the transitions.json shape; any deviation is a SourceError naming what is wrong."""
    try:
        doc = json.loads(data)
    except UnicodeDecodeError as exc:
        raise SourceError(f"{where}: not UTF-8 text at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise SourceError(f"{where}: not JSON at byte {exc.pos}: {exc.msg}") from None
    if not isinstance(doc, dict) or doc.get("machine") not in ("g", "p"):
        raise SourceError(f'{where}: expected an object with "machine": "g" or "p"')
    rows = doc.get("transitions")
    if not isinstance(rows, list):
        raise SourceError(f'{where}: expected "transitions": [...]')
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise SourceError(f"{where}: transitions[{i}] is not an object")
        try:
            edge = ObservedEdge(doc["machine"], row["from"], row["to"], row.get("function") or "",
                                row.get("file") or "", int(row.get("line") or 0), int(row["count"]))  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            raise SourceError(f"{where}: transitions[{i}]: missing or malformed field {exc}") from None
        if not all(isinstance(v, str) for v in (edge.src, edge.dst, edge.function, edge.file)):
            raise SourceError(f"{where}: transitions[{i}]: from/to/function/file must be strings")
        if edge.count < 0:
            raise SourceError(f"{where}: transitions[{i}]: negative count")
        out.append(edge)
    return doc["machine"], out


def observed_edges(directory: str | Path, machine: str) -> list[ObservedEdge]:
    """The observed edges of MACHINE: DIRECTORY/transitions.json, else the records of a
    `lab observe` folder (asked of the lab layer)."""
    path = Path(directory) / FILE_NAME
    if not path.exists() and (Path(directory) / LAB_SITES_FILE).exists():
        from goblueprint.lab.transitions import observed_transitions

        rows = observed_transitions(directory, machine)
        return parse(json.dumps({"machine": machine, "transitions": rows}).encode(), str(directory))[1]
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PathError.from_os(path, exc, write=None) from None
    recorded, edges = parse(data, str(path))
    if recorded != machine:
        raise SourceError(f"{path}: records the {recorded.upper()} machine, not {machine.upper()}")
    return edges


def check_release(directory: str | Path, source_version: str | None) -> None:
    """A lab folder records the Go release it ran: its sites (file:line) are that release's,
    and matched against another release's source they would name other lines."""
    sites = Path(directory) / LAB_SITES_FILE
    if not sites.exists() or not source_version:
        return
    try:
        ran = json.loads(sites.read_text()).get("go_version")
    except (OSError, ValueError, AttributeError):
        return  # observed_edges has read it already; a damaged file fails there
    if ran and ran != source_version:
        major_minor = ".".join(ran.split(".")[:2])
        raise SourceError(
            f"{directory} observed Go {ran}, the source is Go {source_version}: "
            f"verify against the release that ran (--go {major_minor})"
        )


def apply(result: dict[str, Any], edges: list[ObservedEdge]) -> dict[str, Any]:
    """Confirm drawn edges seen at run time, and give `*` transitions the prior states observed at their site."""
    by_pair: dict[tuple[str, str], list[ObservedEdge]] = defaultdict(list)
    by_site: dict[tuple[str, int, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for e in edges:
        if e.count > 0:
            by_pair[(e.src, e.dst)].append(e)
            by_site[(e.file, e.line, e.dst)][e.src] += e.count
    for rec in result["edges"]:
        seen = by_pair.get((rec["from"], rec["to"]))
        if not seen:
            continue
        rec["observed"] = {
            "count": sum(e.count for e in seen),
            "sites": [
                {"function": e.function, "file": e.file, "line": e.line, "count": e.count}
                for e in sorted(seen, key=lambda e: (e.file, e.line, e.function))
            ],
        }
        if rec["verdict"] != "confirmed":
            rec["static_verdict"] = rec["verdict"]
            rec["verdict"] = "confirmed"
            rec["confirmed_by"] = "observation"
    wild = []
    for w in result.get("wildcards", []):
        got = by_site.get((w["file"], w["line"], w["to"]))
        wild.append(w | {"observed_from": dict(sorted(got.items())) if got else {}})
    result["wildcards"] = wild
    result["observed_edges"] = sum(e.count for e in edges)
    return result
