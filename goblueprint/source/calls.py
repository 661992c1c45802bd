"""The runtime's call graph: Go calls, closures passed to systemstack/mcall, go and defer
statements, function values passed as arguments, and assembly calls."""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any, NamedTuple

from goblueprint.errors import SourceError


class Edge(NamedTuple):
    caller: str
    callee: str
    kind: str  # call, go, defer, systemstack, mcall, closure, ref, asm
    file: str
    line: int

    def as_json(self) -> dict[str, Any]:
        return {
            "caller": self.caller,
            "callee": self.callee,
            "kind": self.kind,
            "file": self.file,
            "line": self.line,
        }


def _edge_kind(call: dict[str, Any]) -> str:
    kind = call["kind"]
    if kind != "call":
        return kind
    return call.get("ctx") or "call"


class CallGraph:
    def __init__(self, facts: dict[str, Any]):
        self.out: dict[str, list[Edge]] = defaultdict(list)
        self.into: dict[str, list[Edge]] = defaultdict(list)
        self.defined: dict[str, tuple[str, int]] = {}
        # Plain tuples while deduplicating and sorting: an order of magnitude cheaper than dataclasses.
        seen: set[tuple[str, str, str, str, int]] = set()
        for f in facts["funcs"]:
            self.defined.setdefault(f["name"], (f["file"], f["line"]))
            for c in f["calls"]:
                seen.add((f["name"], c["callee"], _edge_kind(c), f["file"], c["line"]))
        for name, (file, line) in (facts.get("asm_symbols") or {}).items():
            self.defined.setdefault(name, (file, line))
        for caller, callee, file, line, _op in facts.get("asm_edges") or []:
            seen.add((caller, callee, "asm", file, line))
        for t in sorted(seen):
            e = Edge._make(t)
            self.out[e.caller].append(e)
            self.into[e.callee].append(e)

    def resolve(self, name: str) -> str:
        """Accept `newproc`, `runtime.newproc`, `(*p).destroy`, `p.destroy` or `destroy` when unambiguous."""
        name = name.removeprefix("runtime.")
        if name in self.defined or name in self.into:
            return name
        if "." in name and not name.startswith("("):
            recv, _, meth = name.rpartition(".")
            for cand in (f"(*{recv}).{meth}", f"({recv}).{meth}"):
                if cand in self.defined:
                    return cand
        matches = sorted(n for n in self.defined if n.endswith(f").{name}"))
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise SourceError(f"{name} is ambiguous: {', '.join(matches[:10])}")
        raise SourceError(f"no function {name} in this runtime")

    def callees(self, name: str) -> list[Edge]:
        return list(self.out.get(self.resolve(name), []))

    def callers(self, name: str) -> list[Edge]:
        return list(self.into.get(self.resolve(name), []))

    def paths(self, src: str, dst: str, depth: int = 8, limit: int = 20) -> list[list[Edge]]:
        """The shortest call paths from SRC to DST (at most DEPTH calls), up to LIMIT of them."""
        src, dst = self.resolve(src), self.resolve(dst)
        if depth < 1:
            raise SourceError("--depth must be at least 1")
        # Distances to DST over reversed edges, so that only edges on shortest paths are followed.
        dist = {dst: 0}
        queue = deque([dst])
        while queue:
            node = queue.popleft()
            if dist[node] >= depth:
                continue
            for e in self.into.get(node, []):
                if e.caller not in dist:
                    dist[e.caller] = dist[node] + 1
                    queue.append(e.caller)
        if src not in dist or src == dst:
            return []
        found: list[list[Edge]] = []

        def walk(node: str, path: list[Edge]) -> None:
            if len(found) >= limit:
                return
            if node == dst:
                found.append(list(path))
                return
            best: dict[str, Edge] = {}
            for e in self.out.get(node, []):
                if dist.get(e.callee) == dist[node] - 1 and e.callee not in best:
                    best[e.callee] = e  # one edge per distinct callee: the first site
            for callee in sorted(best):
                path.append(best[callee])
                walk(callee, path)
                path.pop()

        walk(src, [])
        return found

    def reaches(self, src: str, dst: str, depth: int = 12) -> bool:
        """Whether SRC calls DST at any depth (up to DEPTH)."""
        try:
            return bool(self.paths(src, dst, depth=depth, limit=1))
        except SourceError:
            return False
