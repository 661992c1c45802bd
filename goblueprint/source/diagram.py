"""Read hand-drawn Mermaid diagrams: `graph`/`flowchart` edges and `stateDiagram(-v2)` transitions.

Only what a state-machine drawing needs: nodes with their labels and edges with
their labels, each with its line number.  Anything else that is not a known
decoration statement (style, class, subgraph ...) is an error naming its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from goblueprint.errors import SourceError


@dataclass(frozen=True)
class DiagramEdge:
    src: str  # node label as drawn (falls back to the node id)
    dst: str
    label: str | None
    line: int
    src_id: str = ""
    dst_id: str = ""


_HEADER = re.compile(
    r"^(?:(?P<flow>graph|flowchart)(?:\s+(?:TB|TD|BT|RL|LR))?|(?P<state>stateDiagram(?:-v2)?))\s*;?$"
)
_SKIP_FLOW = re.compile(
    r"^(?:subgraph\b|end\b|classDef\b|class\b|style\b|linkStyle\b|click\b|direction\b|%%)"
)
_SKIP_STATE = re.compile(
    r"^(?:note\b|end note\b|direction\b|classDef\b|class\b|style\b|%%|\}|state\s+\S+\s*\{$)"
)

# Node: id then an optional shape holding the label.
_NODE = re.compile(
    r"(?P<id>[A-Za-z0-9_][A-Za-z0-9_.\-]*)"
    r"(?P<shape>\[\[.*?\]\]|\[\(.*?\)\]|\(\[.*?\]\)|\(\(.*?\)\)|\{\{.*?\}\}|\[/.*?/\]|\[.*?\]|\(.*?\)|\{.*?\}|>.*?\])?"
)
# Link: `-->|text|`, `-- text -->`, `==>`, `-.->`, `---` and friends.
_LINK = re.compile(
    r"\s*(?:"
    r"(?:--|==|-\.)\s*(?P<inline>[^|\s>-][^|>]*?)\s*(?:-->|==>|\.->|---|-\.-)"
    r"|<?(?:-{2,}>|-{3,}|={2,}>|-\.+->|-\.+-|--[xo]|==[xo])\s*(?:\|(?P<piped>[^|]*)\|)?"
    r")\s*"
)
_STATE_EDGE = re.compile(
    r"^(?P<src>\[\*\]|[^\s:]+)\s*-->\s*(?P<dst>\[\*\]|[^\s:]+)\s*(?::\s*(?P<label>.*))?$"
)
_STATE_ALIAS = re.compile(r'^state\s+"(?P<desc>[^"]*)"\s+as\s+(?P<id>\S+)$')
_STATE_DESC = re.compile(r"^(?P<id>[A-Za-z0-9_]+)\s*:\s*(?P<desc>.+)$")


def _shape_text(shape: str | None) -> str | None:
    if not shape:
        return None
    text = shape
    for opener, closer in (
        ("[[", "]]"),
        ("[(", ")]"),
        ("([", "])"),
        ("((", "))"),
        ("{{", "}}"),
        ("[/", "/]"),
    ):
        if text.startswith(opener) and text.endswith(closer):
            text = text[len(opener) : -len(closer)]
            break
    else:
        text = text[1:-1]
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    return text.strip()


def parse(text: str, path: str = "diagram") -> list[DiagramEdge]:
    lines = text.splitlines()
    kind = None
    start = 0
    in_front_matter = False
    for i, raw in enumerate(lines):
        stripped = raw.strip()
        if stripped == "---":  # YAML front matter (title, config) between two --- lines
            in_front_matter = not in_front_matter
            continue
        if in_front_matter or not stripped or stripped.startswith("%%"):
            continue
        m = _HEADER.match(stripped)
        if not m:
            raise SourceError(
                f"{path}:{i + 1}: not a Mermaid graph, flowchart or stateDiagram: {stripped[:60]!r}"
            )
        kind = "flow" if m.group("flow") else "state"
        start = i + 1
        break
    if kind is None:
        raise SourceError(f"{path}:1: empty diagram (expected graph, flowchart or stateDiagram-v2)")
    if kind == "flow":
        return _parse_flow(lines, start, path)
    return _parse_state(lines, start, path)


def _parse_flow(lines: list[str], start: int, path: str) -> list[DiagramEdge]:
    labels: dict[str, str] = {}
    raw_edges: list[tuple[str, str, str | None, int]] = []
    for i in range(start, len(lines)):
        lineno = i + 1
        for stmt in lines[i].split(";"):
            stmt = stmt.strip()
            if not stmt or _SKIP_FLOW.match(stmt):
                continue
            pos = 0
            chain: list[tuple[str, str | None]] = []
            while True:
                node = _NODE.match(stmt, pos)
                if not node:
                    raise SourceError(f"{path}:{lineno}: cannot read Mermaid statement: {stmt[:80]!r}")
                node_id = node.group("id")
                label = _shape_text(node.group("shape"))
                if label is not None:
                    labels[node_id] = label
                pos = node.end()
                if chain:
                    raw_edges.append((chain[-1][0], node_id, chain[-1][1], lineno))
                if pos >= len(stmt) or not stmt[pos:].strip():
                    break
                link = _LINK.match(stmt, pos)
                if not link or link.end() == pos:
                    raise SourceError(f"{path}:{lineno}: cannot read Mermaid statement: {stmt[:80]!r}")
                edge_label = link.group("inline") or link.group("piped")
                chain.append((node_id, edge_label.strip() if edge_label and edge_label.strip() else None))
                pos = link.end()
            if not chain and pos < len(stmt):
                raise SourceError(f"{path}:{lineno}: cannot read Mermaid statement: {stmt[:80]!r}")
    return [DiagramEdge(labels.get(s, s), labels.get(d, d), lab, ln, s, d) for s, d, lab, ln in raw_edges]


def _parse_state(lines: list[str], start: int, path: str) -> list[DiagramEdge]:
    labels: dict[str, str] = {}
    raw_edges: list[tuple[str, str, str | None, int]] = []
    in_note = False
    for i in range(start, len(lines)):
        lineno = i + 1
        stmt = lines[i].strip()
        if in_note:
            in_note = stmt != "end note"
            continue
        if not stmt:
            continue
        if stmt.startswith("note ") and ":" not in stmt:
            in_note = True
            continue
        if _SKIP_STATE.match(stmt):
            continue
        m = _STATE_EDGE.match(stmt)
        if m:
            label = (m.group("label") or "").strip() or None
            raw_edges.append((m.group("src"), m.group("dst"), label, lineno))
            continue
        m = _STATE_ALIAS.match(stmt)
        if m:
            labels[m.group("id")] = m.group("desc")
            continue
        m = _STATE_DESC.match(stmt)
        if m:
            labels.setdefault(m.group("id"), m.group("desc"))
            continue
        if re.fullmatch(r"[A-Za-z0-9_]+", stmt):
            continue  # a bare state declaration
        raise SourceError(f"{path}:{lineno}: cannot read Mermaid statement: {stmt[:80]!r}")
    # The start/end pseudo-state [*] is not a status: edges touching it are dropped.
    return [
        DiagramEdge(labels.get(s, s), labels.get(d, d), lab, ln, s, d)
        for s, d, lab, ln in raw_edges
        if s != "[*]" and d != "[*]"
    ]
