"""The interactive state-machine page: the layered drawing, and for a clicked edge, each site with
highlighted source lines (pygments) and its call chain.  Offline and self-contained: no network,
no eval; the data is JSON inside the page."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import GoLexer

from goblueprint.source import drawing, graphviz
from goblueprint.source.render_statemachine import _dot
from goblueprint.source.states import PRIOR_RULES, Blueprint

_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

_SCRIPT = """
(() => {
  const data = JSON.parse(document.getElementById('gbp-data').textContent);
  const panel = document.getElementById('sites');
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
  function show(index) {
    const e = data.edges[index];
    document.querySelectorAll('g.edge.selected').forEach((g) => g.classList.remove('selected'));
    document.querySelectorAll('g.edge[id$="e' + index + '"]').forEach((g) => g.classList.add('selected'));
    let out = '<h2>' + esc(e.from) + ' &rarr; ' + esc(e.to) + '</h2><p>' + e.sites.length + ' site(s)</p>';
    for (const s of e.sites) {
      out += '<div class="site"><div class="where"><b>' + esc(s.function) + '</b> ' + esc(s.file) + ':' + s.line +
        '</div><div class="meta">via ' + esc(s.mechanism) + (s.indirect ? ' (indirect)' : '') +
        (s.context ? ', in ' + esc(s.context) : '') + '; prior status: ' + esc(data.rules[s.prior] || s.prior) +
        '</div><div class="chain">call path: ' + s.chain.map(esc).join(' &rarr; ') + '</div>' +
        (s.html || '') + '</div>';
    }
    panel.innerHTML = out;
    window.__gbpStates.selected = index;
  }
  for (const g of document.querySelectorAll('g.edge')) {
    const m = /e(\\d+)$/.exec(g.id || '');
    if (!m) continue;
    g.style.cursor = 'pointer';
    g.addEventListener('click', (ev) => { ev.preventDefault(); show(Number(m[1])); });
  }
  const fold = document.getElementById('fold');
  function applyFold() {
    document.getElementById('full').style.display = fold.checked ? 'none' : '';
    document.getElementById('folded').style.display = fold.checked ? '' : 'none';
  }
  if (fold) { fold.addEventListener('change', applyFold); applyFold(); }
  window.__gbpStates = {ready: true, selected: null, show};
})();
"""

_STYLE = """
body { font-family: sans-serif; margin: 0; display: flex; height: 100vh; }
#graph { flex: 3; overflow: auto; padding: 8px; border-right: 1px solid #ccc; }
#graph svg { height: auto; }
#sites { flex: 2; overflow: auto; padding: 8px 12px; font-size: 13px; }
.site { border-top: 1px solid #ddd; padding: 6px 0; }
.meta, .chain { color: #444; margin: 2px 0; }
g.edge:hover path, g.edge.selected path { stroke: #c30; stroke-width: 2.5; }
g.edge:hover text, g.edge.selected text { fill: #c30; }
.src pre { font-size: 12px; background: #f8f8f8; padding: 4px; overflow-x: auto; }
.src .hll { background-color: #ffe8a0; }
"""


def _highlighted(snippet: dict[str, Any]) -> str:
    if not snippet.get("text"):
        return ""
    fmt = HtmlFormatter(cssclass="src", linenos="inline", linenostart=snippet["first"],
                        hl_lines=[snippet["line"] - snippet["first"] + 1])  # fmt: skip
    return highlight(snippet["text"], GoLexer(), fmt)


def page(bp: Blueprint, goroot: Path | None, include_indirect: bool = False) -> str:
    d = drawing.drawing(bp, include_indirect)
    details = drawing.site_details(d, bp, goroot)
    edges = []
    for e, rows in zip(d.edges, details, strict=True):
        sites = []
        for row in rows:
            snippet = row.pop("snippet", None)
            sites.append(row | {"html": _highlighted(snippet) if snippet else ""})
        edges.append({"from": e.src, "to": e.dst, "functions": e.functions, "sites": sites})
    data = json.dumps({"edges": edges, "rules": PRIOR_RULES}, sort_keys=True).replace("</", "<\\/")
    full = graphviz.svg(_dot(d, include_scan=True, id_prefix="full-e"))
    folded = graphviz.svg(_dot(d, include_scan=False, id_prefix="fold-e")) if d.scan else ""
    fold_box = '<label><input type="checkbox" id="fold"> fold the scan states away</label>' if d.scan else ""
    title = html.escape(d.title)
    css = HtmlFormatter(cssclass="src").get_style_defs(".src")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>{title}</title><style>{_STYLE}{css}</style></head><body>"
        f'<div id="graph"><div>{fold_box} Click an edge for its sites; hover for its functions.</div>'
        f'<div id="full">{full}</div><div id="folded" style="display:none">{folded}</div></div>'
        f'<div id="sites"><h2>{title}</h2><p>{len(d.edges)} edges. Click one.</p></div>'
        f'<script type="application/json" id="gbp-data">{data}</script>'
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
