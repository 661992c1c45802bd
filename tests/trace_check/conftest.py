"""Fixtures of the trace_check tests: Go's own answers, from a helper built once.

``gohelper`` (tests/trace_check/gohelper/main.go) imports internal/trace, so it is
built with ``go build -overlay`` as if it lived in GOROOT/src/cmd/ of the bundled
toolchain, without copying or touching the GOROOT.  The binary is cached under
goblueprint's cache dir, keyed by the helper's source and the Go release.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from goblueprint import toolchain
from goblueprint.toolchain.cachelock import publish
from goblueprint.trace.textform import go_unquote

HERE = Path(__file__).resolve().parent
HELPER_SRC = HERE / "gohelper" / "main.go"
GOPROGS = HERE / "goprogs"


def _build_helper() -> Path:
    tc = toolchain.find()
    digest = hashlib.sha256(HELPER_SRC.read_bytes()).hexdigest()[:16]
    out_dir = toolchain.cache_dir() / "trace-check-helper" / f"go{tc.version}-{digest}"

    def compile_into(tmp: Path) -> None:
        tmp.mkdir()
        overlay = tmp / "overlay.json"
        target = tc.goroot / "src" / "cmd" / "goblueprinttestgohelper" / "main.go"
        overlay.write_text(json.dumps({"Replace": {str(target): str(HELPER_SRC)}}))
        tc.run(
            ["build", "-overlay", str(overlay), "-o", str(tmp / "gohelper"), "cmd/goblueprinttestgohelper"],
            cwd=tmp,
            env={"GOFLAGS": ""},
        )

    return publish(out_dir, compile_into, ready=lambda: (out_dir / "gohelper").exists()) / "gohelper"


@dataclass(frozen=True)
class GoHelper:
    binary: Path

    def golden(self, out_dir: Path, tests: list[Path]) -> dict[str, str]:
        """Go's testtrace.ParseFile wire bytes into OUT_DIR; {basename: Go's verdict}."""
        proc = subprocess.run(
            [str(self.binary), "golden", str(out_dir), *map(str, tests)],
            capture_output=True, text=True, encoding="utf-8", errors="surrogateescape", check=True, timeout=300,
        )  # fmt: skip
        verdicts = {}
        for line in proc.stdout.splitlines():
            name, _, verdict = line.partition(" ")
            verdicts[name] = verdict
        return verdicts

    def read(self, trace: Path) -> tuple[int, str | None]:
        """(events Go's reader yields, None or Go's error text) for a binary trace."""
        proc = subprocess.run(
            [str(self.binary), "read", str(trace)], capture_output=True, check=True, timeout=120
        )
        return self.parse_read(proc.stdout)

    @staticmethod
    def parse_read(stdout: bytes) -> tuple[int, str | None]:
        """`N SUCCESS` or `N FAILURE <%q of the error>` -> (N, None or the error's text).

        The error is quoted by Go's %q (strconv.Quote), not JSON: control bytes come out
        as \\x05 and invalid UTF-8 as \\xff, which only Go's unquoting reads back.  Bytes
        that are not UTF-8 are kept as surrogate escapes, so nothing of Go's text is lost.
        """
        count, _, verdict = stdout.decode("utf-8").strip().partition(" ")
        if verdict == "SUCCESS":
            return int(count), None
        quoted = verdict.removeprefix("FAILURE ")
        return int(count), go_unquote(quoted).decode("utf-8", "surrogateescape")

    def regexp(self, pairs: list[tuple[str, str]]) -> list[str]:
        """Go's regexp on each (pattern, text): "match", "nomatch" or "error"."""
        text = "".join(json.dumps(list(p)) + "\n" for p in pairs)
        proc = subprocess.run(
            [str(self.binary), "regexp"], input=text.encode(), capture_output=True, check=True, timeout=120
        )
        return proc.stdout.decode().split()


@pytest.fixture(scope="session")
def gohelper() -> GoHelper:
    return GoHelper(_build_helper())


@pytest.fixture(scope="session")
def small_trace(go_trace) -> Callable[[str], Path]:
    """Factory: small_trace("1.27") -> a real trace of a few KB (tests/trace_check/goprogs/small)."""

    def make(go: str = "1.27") -> Path:
        return go_trace("small", go=go, prog_root=GOPROGS)

    return make
