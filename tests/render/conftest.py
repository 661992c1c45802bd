"""Fixtures of the renderer tests: headless Chromium, synthetic and real timelines, rendered pages."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth


@dataclass
class Opened:
    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def state(self, expr: str) -> Any:
        return self.page.evaluate(f"(() => {{ const S = window.__gbp; return {expr}; }})()")

    def act(self, expr: str) -> None:
        """Run EXPR in the page, then wait until the viewer has drawn a frame after it."""
        frames = self.state("S.stats.frames")
        self.state(f"({expr}, 0)")
        self.wait_frame(frames)

    def wait_frame(self, after: int) -> None:
        # A function, not an expression string: the page's CSP forbids eval, and Playwright
        # would eval a bare expression.
        self.page.wait_for_function(f"() => window.__gbp.stats.frames > {after}", timeout=30_000)


@pytest.fixture
def open_page(browser) -> Iterator[Callable[..., Opened]]:
    """open_page(path) -> Opened page with the viewer loaded and one frame drawn; records console and network."""
    contexts = []

    def opener(path: Path, width: int = 1400, height: int = 800) -> Opened:
        ctx = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(ctx)
        page = ctx.new_page()
        opened = Opened(page)
        page.on("console", lambda m: opened.console.append((m.type, m.text)))
        page.on("pageerror", lambda e: opened.console.append(("pageerror", str(e))))
        page.on("request", lambda r: opened.requests.append(r.url))
        page.goto(path.resolve().as_uri())
        page.wait_for_function(
            "() => window.__gbp && (window.__gbp.error || (window.__gbp.ready && window.__gbp.stats.frames > 0))",
            timeout=120_000,
        )
        assert opened.state("S.error") is None
        return opened

    yield opener
    for ctx in contexts:
        ctx.close()


@pytest.fixture(scope="session")
def sched_timeline(go_trace):
    """The Timeline of the real `sched` program's trace (Go 1.27), built once per session."""
    from goblueprint.timeline.model import build_timeline

    return build_timeline(go_trace("sched"))


@pytest.fixture(scope="session")
def synthetic_timeline():
    return synth.synthetic()


@pytest.fixture(scope="session")
def hostile_timeline():
    return synth.synthetic(hostile=True)
