"""What a state-machine drawing shows: grouped states, one edge per (from, to), and each site's details.

Analysis only (no formatting): renderers in render_statemachine.py lay this out.  Each edge keeps
every transition behind it; each site gets a few lines of source and the chain of calls that
makes the write (for indirect records, caller -> performer -> ... -> the function that writes).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goblueprint.source.states import WILDCARD, Blueprint, Transition

_CONTEXT_LINES = 3


@dataclass
class DrawEdge:
    src: str
    dst: str
    transitions: list[Transition]

    @property
    def functions(self) -> list[str]:
        return sorted({t.function for t in self.transitions})


@dataclass
class Drawing:
    title: str
    machine: str
    main: list[str]  # states not in a scan group
    scan: list[str]  # _Gscan* states, drawn as a group that can be folded away
    wildcard: bool  # whether a "*" node is needed
    edges: list[DrawEdge] = field(default_factory=list)


def is_scan(name: str) -> bool:
    return name.startswith("_Gscan")


def drawing(bp: Blueprint, include_indirect: bool = False, include_scan: bool = True) -> Drawing:
    grouped: dict[tuple[str, str], list[Transition]] = defaultdict(list)
    for t in bp.transitions:
        if t.indirect and not include_indirect:
            continue
        if t.dst == WILDCARD:
            continue  # neither end knowable: nothing to draw
        if not include_scan and (is_scan(t.src) or is_scan(t.dst)):
            continue
        grouped[(t.src, t.dst)].append(t)
    used = {s for pair in grouped for s in pair}
    order = [s.name for s in bp.states if s.name in used]
    order += sorted(used - set(order) - {WILDCARD})
    edges = [DrawEdge(s, d, sorted(ts)) for (s, d), ts in sorted(grouped.items())]
    return Drawing(
        title=f"{bp.machine.upper()} states of Go {bp.go_version}",
        machine=bp.machine,
        main=[s for s in order if not is_scan(s)],
        scan=[s for s in order if is_scan(s)],
        wildcard=WILDCARD in used,
        edges=edges,
    )


def call_chain(t: Transition, bp: Blueprint) -> list[str]:
    """Caller first: the functions through which T's write is made."""
    chain = [t.function]
    if t.mechanism != chain[-1] and not t.mechanism.startswith(
        ("assignment", "atomic", "atomicstatus", "status")
    ):
        chain.append(t.mechanism)
    seen = set(chain)
    current = t
    while current.indirect:
        nxt = next(
            (u for u in sorted(bp.transitions)
             if u.function == current.mechanism and (u.src, u.dst) == (current.src, current.dst)),
            None,
        )  # fmt: skip
        if nxt is None:
            break
        if nxt.mechanism not in seen and not nxt.mechanism.startswith(("assignment", "atomic")):
            chain.append(nxt.mechanism)
            seen.add(nxt.mechanism)
        current = nxt
    return chain


def snippet(goroot: Path, file: str, line: int) -> dict[str, Any]:
    """A few lines around FILE:LINE of GOROOT (file is relative to GOROOT), or an empty text."""
    try:
        lines = (goroot / file).read_text(errors="replace").splitlines()
    except OSError:
        return {"first": line, "text": "", "line": line}
    first = max(1, line - _CONTEXT_LINES)
    last = min(len(lines), line + _CONTEXT_LINES)
    return {"first": first, "line": line, "text": "\n".join(lines[first - 1 : last])}


def site_details(d: Drawing, bp: Blueprint, goroot: Path | None) -> list[list[dict[str, Any]]]:
    """Per edge of D, per transition: the record, its call chain and its source lines."""
    out = []
    for e in d.edges:
        rows = []
        for t in e.transitions:
            row = t.as_json() | {"chain": call_chain(t, bp)}
            if goroot is not None:
                row["snippet"] = snippet(goroot, t.file, t.line)
            rows.append(row)
        out.append(rows)
    return out
