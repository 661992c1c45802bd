"""Writers for state machines: Mermaid, DOT, SVG and Markdown.  They only format."""

from __future__ import annotations

import html
from collections import defaultdict

from goblueprint.source import drawing, graphviz
from goblueprint.source.states import WILDCARD, Blueprint

_ANY = "any"  # node id for "prior status not stated by the code"
_MAX_LABEL_FUNCS = 3


def _edges(bp: Blueprint, include_indirect: bool) -> dict[tuple[str, str], list[str]]:
    grouped: dict[tuple[str, str], set[str]] = defaultdict(set)
    for t in bp.transitions:
        if t.indirect and not include_indirect:
            continue
        grouped[(t.src, t.dst)].add(t.function)
    return {k: sorted(v) for k, v in sorted(grouped.items())}


def _label(funcs: list[str]) -> str:
    shown = funcs[:_MAX_LABEL_FUNCS]
    more = len(funcs) - len(shown)
    return ", ".join(shown) + (f" +{more}" if more else "")


def _node_id(name: str) -> str:
    return _ANY if name == WILDCARD else name.lstrip("_") or name


def _used_states(bp: Blueprint, edges: dict[tuple[str, str], list[str]]) -> list[str]:
    used = {s for pair in edges for s in pair}
    ordered = [s.name for s in bp.states if s.name in used]
    ordered += sorted(used - set(ordered) - {WILDCARD})
    if WILDCARD in used:
        ordered.append(WILDCARD)
    return ordered


def mermaid(bp: Blueprint, include_indirect: bool = False) -> str:
    edges = _edges(bp, include_indirect)
    lines = [
        f"%% {bp.machine.upper()} status transitions of Go {bp.go_version} (goblueprint source states)",
        "stateDiagram-v2",
    ]
    for name in _used_states(bp, edges):
        shown = "* (status not stated by the code)" if name == WILDCARD else name
        lines.append(f'    state "{_mermaid_text(shown)}" as {_node_id(name)}')
    for (src, dst), funcs in edges.items():
        lines.append(f"    {_node_id(src)} --> {_node_id(dst)} : {_mermaid_text(_label(funcs))}")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    # Mermaid has no escaping for these inside labels; replace with look-alikes.
    return text.replace('"', "'").replace(":", "∶").replace(";", ",").replace("\n", " ")


def dot(bp: Blueprint, include_indirect: bool = False, include_scan: bool = True) -> str:
    """A layered Graphviz graph: main states in one group, scan states in a dashed, separate one,
    one edge per (from, to) labelled with its first function (all of them in the tooltip)."""
    return _dot(drawing.drawing(bp, include_indirect), include_scan)


def _dot(d: drawing.Drawing, include_scan: bool = True, id_prefix: str = "e") -> str:
    lines = [
        f'digraph "{_dot_text(d.machine)}" {{',
        f'  graph [rankdir=LR, nodesep=0.35, ranksep=0.9, fontname="sans-serif", fontsize=14, '
        f'labelloc=t, label="{_dot_text(d.title)}", tooltip="{_dot_text(d.title)}"];',
        '  node [shape=box, style="rounded,filled", fillcolor="#eef2ff", color="#336", '
        'fontname="sans-serif", fontsize=12];',
        '  edge [fontname="sans-serif", fontsize=10, color="#555", fontcolor="#224", arrowsize=0.7];',
        "  subgraph cluster_main {",
        '    label="states"; style="rounded"; color="#bbb";',
    ]
    for name in d.main:
        lines.append(
            f'    "{_dot_text(name)}" [id="n{_dot_text(_node_id(name))}", tooltip="{_dot_text(name)}"];'
        )
    lines.append("  }")
    if include_scan and d.scan:
        lines += ["  subgraph cluster_scan {",
                  '    label="scan states (_Gscan bit held by the GC)"; style="rounded,dashed"; color="#99a";']  # fmt: skip
        for name in d.scan:
            lines.append(f'    "{_dot_text(name)}" [id="n{_node_id(name)}", fillcolor="#f4f4f8", '
                         f'tooltip="{_dot_text(name)}"];')  # fmt: skip
        lines.append("  }")
    if d.wildcard:
        lines.append(f'  "{WILDCARD}" [id="nany", label="* (prior status\nnot determined statically)", '
                     'shape=box, style="dashed,rounded", fillcolor="white", fontcolor="#555"];')  # fmt: skip
    shown = set(d.main) | (set(d.scan) if include_scan else set()) | {WILDCARD}
    for i, e in enumerate(d.edges):
        if e.src not in shown or e.dst not in shown:
            continue
        funcs = e.functions
        label = funcs[0] + (f"\n+{len(funcs) - 1} more" if len(funcs) > 1 else "")
        tip = f"{e.src} -> {e.dst}: " + ", ".join(funcs)
        style = ", style=dashed" if e.src == WILDCARD else ""
        lines.append(f'  "{_dot_text(e.src)}" -> "{_dot_text(e.dst)}" [id="{id_prefix}{i}", '
                     f'label="{_dot_text(label, keep_newlines=True)}", tooltip="{_dot_text(tip)}", '
                     f'labeltooltip="{_dot_text(tip)}"{style}];')  # fmt: skip
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_text(text: str, keep_newlines: bool = False) -> str:
    if keep_newlines:  # already written as DOT's \n
        return text.replace('"', '\\"').replace("\n", "\\n")
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def markdown(bp: Blueprint, include_indirect: bool = True) -> str:
    lines = [
        f"# {bp.machine.upper()} states of Go {bp.go_version}",
        "",
        "| state | value | comment |",
        "|---|---|---|",
    ]
    for s in bp.states:
        first = s.comment.split("\n\n")[0].replace("\n", " ")
        lines.append(f"| `{s.name}` | {s.value:#x} | {_md(first)} |")
    lines += ["", "| from | to | function | mechanism | context | site |", "|---|---|---|---|---|---|"]
    for t in bp.transitions:
        if t.indirect and not include_indirect:
            continue
        mech = t.mechanism + (" (indirect)" if t.indirect else "")
        lines.append(
            f"| `{t.src}` | `{t.dst}` | `{_md(t.function)}` | {_md(mech)} | {t.context or ''} | {t.file}:{t.line} |"
        )
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|")


def svg(bp: Blueprint, include_indirect: bool = False) -> str:
    """The layered drawing as SVG (Graphviz dot); hovering an edge lists all of its functions."""
    return graphviz.svg(dot(bp, include_indirect))


WRITERS = {"mermaid": mermaid, "dot": dot, "svg": svg, "md": markdown}
