"""Writers for state machines: Mermaid, DOT, SVG and Markdown.  They only format."""

from __future__ import annotations

import html
import math
from collections import defaultdict

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


def dot(bp: Blueprint, include_indirect: bool = False) -> str:
    edges = _edges(bp, include_indirect)
    lines = [f'digraph "{bp.machine}" {{', "  rankdir=LR;", "  node [shape=box, style=rounded];"]
    for name in _used_states(bp, edges):
        shown = "* (status not stated by the code)" if name == WILDCARD else name
        lines.append(f'  "{_dot_text(name)}" [label="{_dot_text(shown)}"];')
    for (src, dst), funcs in edges.items():
        lines.append(f'  "{_dot_text(src)}" -> "{_dot_text(dst)}" [label="{_dot_text(_label(funcs))}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
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
    """A self-contained SVG: states on a circle, one arrow per (from, to) with its functions."""
    edges = _edges(bp, include_indirect)
    names = _used_states(bp, edges)
    size, radius = 900, 330
    center = size / 2
    pos = {}
    for i, name in enumerate(names):
        angle = 2 * math.pi * i / max(len(names), 1) - math.pi / 2
        pos[name] = (center + radius * math.cos(angle), center + radius * math.sin(angle))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}" '
        'font-family="sans-serif" font-size="11">',
        f"<title>{html.escape(bp.machine.upper())} states of Go {html.escape(bp.go_version)}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
    ]
    for (src, dst), funcs in edges.items():
        (x1, y1), (x2, y2) = pos[src], pos[dst]
        label = html.escape(_label(funcs))
        if src == dst:
            out.append(
                f'<path d="M {x1 - 10:.1f} {y1 - 18:.1f} C {x1 - 40:.1f} {y1 - 70:.1f} {x1 + 40:.1f} {y1 - 70:.1f} '
                f'{x1 + 10:.1f} {y1 - 18:.1f}" fill="none" stroke="#555" marker-end="url(#arrow)"/>'
            )
            out.append(f'<text x="{x1:.1f}" y="{y1 - 62:.1f}" text-anchor="middle">{label}</text>')
            continue
        dx, dy = x2 - x1, y2 - y1
        dist = math.hypot(dx, dy) or 1.0
        # Bend each arrow to its left so that A->B and B->A do not overlap.
        mx, my = (x1 + x2) / 2 - dy / dist * 30, (y1 + y2) / 2 + dx / dist * 30
        sx, sy = x1 + dx / dist * 22, y1 + dy / dist * 22
        ex, ey = x2 - dx / dist * 22, y2 - dy / dist * 22
        out.append(
            f'<path d="M {sx:.1f} {sy:.1f} Q {mx:.1f} {my:.1f} {ex:.1f} {ey:.1f}" fill="none" stroke="#555" '
            'marker-end="url(#arrow)"/>'
        )
        out.append(f'<text x="{mx:.1f}" y="{my:.1f}" text-anchor="middle" fill="#224">{label}</text>')
    for name in names:
        x, y = pos[name]
        shown = html.escape("* (not stated)" if name == WILDCARD else name)
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="20" fill="#eef" stroke="#336"/>')
        out.append(
            f'<text x="{x:.1f}" y="{y + 34:.1f}" text-anchor="middle" font-weight="bold">{shown}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


WRITERS = {"mermaid": mermaid, "dot": dot, "svg": svg, "md": markdown}
