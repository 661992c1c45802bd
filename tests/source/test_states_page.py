"""The state-machine drawings in a headless browser: no two labels overlap, clicking an edge shows
its sites with highlighted source and call path, and the scan states fold away.  A screenshot of
each page is saved next to the test's temporary files."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from goblueprint.source import render_statemachine_html, states

pytestmark = pytest.mark.slow

# Bounding boxes of every label of the shown drawing, in page pixels.
_BOXES = """(sel) => [...document.querySelectorAll(sel + ' svg text')].map((t) => {
  const r = t.getBoundingClientRect();
  return {text: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
})"""


@pytest.fixture(autouse=True)
def _needs_dot() -> None:
    if shutil.which("dot") is None:
        pytest.skip("needs Graphviz's dot (Debian package 'graphviz'; .ci/run installs it)")


def overlaps(boxes: list[dict[str, Any]], slack: float = 0.5) -> list[tuple[str, str]]:
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if (
                a["x0"] + slack < b["x1"] - slack
                and b["x0"] + slack < a["x1"] - slack
                and a["y0"] + slack < b["y1"] - slack
                and b["y0"] + slack < a["y1"] - slack
            ):
                found.append((a["text"], b["text"]))
    return found


def open_page(browser, tmp_path: Path, bp: states.Blueprint, goroot: Path, indirect: bool):
    page_file = tmp_path / f"states-{bp.machine}.html"
    page_file.write_text(render_statemachine_html.page(bp, goroot, include_indirect=indirect))
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_file.as_uri())
    page.wait_for_function("() => window.__gbpStates && window.__gbpStates.ready")
    return page, requests, errors


@pytest.mark.parametrize(("machine", "indirect"), [("g", False), ("p", True)])
def test_labels_do_not_overlap_and_edges_open_their_sites(
    browser, real_facts, release_goroot, tmp_path, machine, indirect
):
    bp = states.blueprint(real_facts("1.27"), machine)
    page, requests, errors = open_page(browser, tmp_path, bp, release_goroot("1.27"), indirect)
    try:
        boxes = page.evaluate(_BOXES, "#full")
        assert len(boxes) > 10
        assert overlaps(boxes) == []
        # Click the busiest edge: its panel lists every site with source and call path.
        edges = page.evaluate("() => JSON.parse(document.getElementById('gbp-data').textContent).edges")
        index = max(range(len(edges)), key=lambda i: len(edges[i]["sites"]))
        page.locator(f"g.edge[id='full-e{index}'] text").first.click()
        assert page.evaluate("() => window.__gbpStates.selected") == index
        assert page.locator("#sites .site").count() == len(edges[index]["sites"])
        first = edges[index]["sites"][0]
        panel = page.inner_text("#sites")
        assert f"{first['function']} {first['file']}:{first['line']}" in panel
        assert "call path: " + " → ".join(first["chain"]) in panel
        # The site's own line is the highlighted one of its source lines.
        marked = page.locator("#sites .site").first.locator(".hll").inner_text()
        source_line = (release_goroot("1.27") / first["file"]).read_text().splitlines()[first["line"] - 1]
        assert source_line.strip() in marked
        page.screenshot(path=str(tmp_path / f"states-{machine}.png"), full_page=True)
        if machine == "g":
            page.check("#fold")
            assert page.is_visible("#folded svg") and not page.is_visible("#full svg")
            folded = page.evaluate(_BOXES, "#folded")
            assert not any(b["text"].startswith("_Gscan") for b in folded)
            assert overlaps(folded) == []
        assert errors == []
        assert all(u.startswith(("file:", "data:", "about:")) for u in requests)
    finally:
        page.close()
