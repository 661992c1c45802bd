"""Judge a hand-drawn state diagram against the transitions found in the source.

Verdicts, per drawn edge:

- confirmed: a transition with exactly these ends exists (its prior status was found by a rule
  of states.PRIOR_RULES), or with --observed, it was seen at run time;
- refuted: no such transition, or a node is a state this release no longer has (the record names
  the release that removed or renamed it);
- unknown: only stores whose prior status is not determined statically reach the target, or a
  node is not a status of any release known.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from typing import Any

from goblueprint.errors import SourceError
from goblueprint.source import history
from goblueprint.source.calls import CallGraph
from goblueprint.source.diagram import DiagramEdge
from goblueprint.source.states import WILDCARD, Blueprint, Transition

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FUNC_TOKEN = re.compile(r"\(\*?[A-Za-z_][A-Za-z0-9_]*\)\.[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_.]*")


def state_of(text: str, bp: Blueprint, prefix: str) -> str | None:
    """Map a node label to a status constant: `_Grunnable`, `Grunnable`, `runnable`, `_Grunnable (on runq)`."""
    by_lower = {s.name.lower(): s.name for s in bp.states}
    for word in [text.strip(), *_WORD.findall(text)]:
        w = word.lower()
        for cand in (w, "_" + w, prefix.lower() + w):
            if cand in by_lower:
                return by_lower[cand]
    return None


def _removed_state(text: str, bp: Blueprint, prefix: str) -> dict[str, Any] | None:
    """The removal record of a state that an earlier release had and this one does not."""
    gone = history.shipped()["machines"].get(bp.machine, {})
    by_lower = {name.lower(): name for name in gone}
    for word in [text.strip(), *_WORD.findall(text)]:
        w = word.lower()
        for cand in (w, "_" + w, prefix.lower() + w):
            if cand in by_lower:
                return history.removal(bp.machine, by_lower[cand], bp.go_version)
    return None


def _site(t: Transition) -> dict[str, Any]:
    return t.as_json()


def _nearest_path(bp: Blueprint, src: str, dst: str) -> list[str] | None:
    """Shortest chain of real transitions from SRC to DST (wildcard stores reach their target from anywhere)."""
    succ: dict[str, set[str]] = defaultdict(set)
    anywhere: set[str] = set()
    for t in bp.transitions:
        if t.dst == WILDCARD:
            continue
        if t.src == WILDCARD:
            anywhere.add(t.dst)
        else:
            succ[t.src].add(t.dst)
    prev: dict[str, str | None] = {src: None}
    queue = deque([src])
    while queue:
        node = queue.popleft()
        if node == dst:
            path = [node]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])  # type: ignore[arg-type]
            return path[::-1]
        for nxt in sorted(succ[node] | anywhere):
            if nxt not in prev:
                prev[nxt] = node
                queue.append(nxt)
    return None


def _label_functions(label: str, graph: CallGraph) -> list[str]:
    found = []
    for tok in _FUNC_TOKEN.findall(label):
        try:
            found.append(graph.resolve(tok.rstrip(".")))
        except SourceError:  # a word of the label that is not a function
            continue
    return found


def _label_matches(label: str | None, evidence: list[Transition], graph: CallGraph) -> str | None:
    if not label:
        return None
    funcs = _label_functions(label, graph)
    if not funcs or not evidence:
        return "no"
    performers = {t.function for t in evidence} | {t.mechanism for t in evidence}
    if any(f in performers for f in funcs):
        return "performs"
    targets = sorted({t.function for t in evidence})
    for f in funcs:
        for target in targets:
            if graph.reaches(f, target):
                return "caller"
    return "no"


def verify(edges: list[DiagramEdge], bp: Blueprint, graph: CallGraph, prefix: str) -> dict[str, Any]:
    by_pair: dict[tuple[str, str], list[Transition]] = defaultdict(list)
    for t in bp.transitions:
        by_pair[(t.src, t.dst)].append(t)
    out_edges = []
    drawn: set[tuple[str, str]] = set()
    drawn_targets: set[str] = set()
    for e in edges:
        src = state_of(e.src, bp, prefix) or state_of(e.src_id, bp, prefix)
        dst = state_of(e.dst, bp, prefix) or state_of(e.dst_id, bp, prefix)
        record: dict[str, Any] = {
            "from": src or e.src,
            "to": dst or e.dst,
            "label": e.label,
            "line": e.line,
            "evidence": [],
            "nearest_path": None,
            "exact": False,
        }
        if src is None or dst is None:
            record["label_matches"] = None if not e.label else "no"
            gone = [
                r
                for r in (None if src else _removed_state(e.src, bp, prefix) or _removed_state(e.src_id, bp, prefix),
                          None if dst else _removed_state(e.dst, bp, prefix) or _removed_state(e.dst_id, bp, prefix))
                if r
            ]  # fmt: skip
            if gone:
                record["verdict"] = "refuted"
                record["removed"] = gone
                record["reason"] = "; ".join(
                    f"{r['state']} was removed in Go {r['removed_in']}"
                    + (f" (became {r['became']})" if r["became"] else "")
                    for r in gone
                )
            else:
                record["verdict"] = "unknown"
                record["reason"] = "not a status of this release: " + ", ".join(
                    n for n, s in ((e.src, src), (e.dst, dst)) if s is None
                )
            if src:
                record["from"] = src
            if dst:
                record["to"] = dst
            out_edges.append(record)
            continue
        drawn.add((src, dst))
        drawn_targets.add(dst)
        exact = sorted(by_pair.get((src, dst), []))
        wild = sorted(by_pair.get((WILDCARD, dst), []))
        record["exact"] = bool(exact)
        if exact:
            record["verdict"] = "confirmed"
            record["evidence"] = [_site(t) for t in exact]
            record["prior_rules"] = sorted({t.prior for t in exact})
        elif wild:
            # A store whose prior status no rule decides cannot confirm any particular from-state.
            record["verdict"] = "unknown"
            record["reason"] = f"no store into {dst} states its prior status (not determined statically)"
            record["evidence"] = [_site(t) for t in wild]
        else:
            record["verdict"] = "refuted"
            record["nearest_path"] = _nearest_path(bp, src, dst)
        record["label_matches"] = _label_matches(e.label, exact or wild, graph)
        out_edges.append(record)
    missing = []
    for (src, dst), sites in sorted(by_pair.items()):
        if dst == WILDCARD:
            continue  # neither end knowable: nothing a drawing could show
        if src == WILDCARD:
            if dst in drawn_targets:
                continue
        elif (src, dst) in drawn:
            continue
        missing.append({"from": src, "to": dst, "functions": sorted({t.function for t in sites}),
                        "evidence": [_site(t) for t in sorted(sites)]})  # fmt: skip
    wildcards = [
        {"to": t.dst, "function": t.function, "file": t.file, "line": t.line, "mechanism": t.mechanism}
        for t in sorted(bp.transitions)
        if t.src == WILDCARD and t.dst != WILDCARD and not t.indirect
    ]
    return {
        "go_version": bp.go_version,
        "machine": bp.machine,
        "edges": out_edges,
        "missing": missing,
        "wildcards": wildcards,
    }


def exit_status(result: dict[str, Any]) -> int:
    """0 when every drawn edge is confirmed, 1 when any is refuted or unknown (like a linter)."""
    return 0 if all(e["verdict"] == "confirmed" for e in result["edges"]) else 1
