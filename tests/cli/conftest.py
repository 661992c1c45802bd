"""Running goblueprint as a user does: a subprocess, its exit status and its stderr.

A process costs most of a second (numpy, polars, the compiled trace loops), so a
table of cases runs in one process: ``run_many`` feeds argv lists to a driver
that calls ``goblueprint.cli.main`` for each, as ``python -m goblueprint`` would,
and reports exit status, stdout and stderr per case (an exception that escapes
``main`` is reported as the traceback Python would print).  ``run_one`` is the
real entry point, for the cases that must go through ``sys.exit``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

DRIVER = r"""
import contextlib, io, json, sys, traceback
from goblueprint.cli import main

results = []
cases, report = json.load(sys.stdin), sys.argv[1]
for argv in cases:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: --help, usage errors
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
    out.flush()
    text = out.buffer.getvalue().decode("utf-8", "replace")
    results.append({"code": code, "stdout": text, "stderr": err.getvalue()})
with open(report, "w") as f:  # not stdout: a child process (a Go program) may write there
    json.dump(results, f)
"""


@dataclass
class Result:
    argv: list[str]
    code: int
    stdout: str
    stderr: str

    def lines(self) -> list[str]:
        return self.stderr.splitlines()

    def one_line(self, kind: str = "error") -> str:
        """The single stderr line, which must be goblueprint's KIND line; no traceback."""
        assert "Traceback" not in self.stderr, f"{self.argv}: {self.stderr}"
        lines = self.lines()
        assert len(lines) == 1, f"{self.argv}: {self.stderr!r}"
        assert lines[0].startswith(f"goblueprint: {kind}: "), f"{self.argv}: {lines[0]}"
        return lines[0]


def _env() -> dict[str, str]:
    # Never a terminal here, but say so: no progress lines on stderr whatever runs the tests.
    return dict(os.environ, TERM="dumb", COLUMNS="200")


def run_many(cases: list[list[str]], cwd: str | None = None) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="gbp-cli-") as tmp:
        report = Path(tmp) / "report.json"
        proc = subprocess.run(
            [sys.executable, "-c", DRIVER, str(report)], input=json.dumps(cases), capture_output=True,
            text=True, env=_env(), cwd=cwd, timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        results = json.loads(report.read_text())
    return [Result(argv, **r) for argv, r in zip(cases, results, strict=True)]


def run_one(*argv: str, cwd: str | None = None) -> Result:
    proc = subprocess.run(
        [sys.executable, "-m", "goblueprint", *argv], capture_output=True, text=True, env=_env(), cwd=cwd,
        timeout=600,
    )  # fmt: skip
    return Result(list(argv), proc.returncode, proc.stdout, proc.stderr)
