"""Record the schedtrace/scheddetail logs under tests/capture/data/.

Run from the repository root:  .venv/bin/python tests/capture/data/record_logs.py
It captures tests/capture/goprogs/mainpkg (go.mod says go 1.21 so that 1.21 builds it)
with each release below, GOMAXPROCS=3,
and keeps the schedtrace.log of each capture as DATA/<kind>-go<version>.log.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from goblueprint import toolchain
from goblueprint.capture import capture

HERE = Path(__file__).resolve().parent
PROG = HERE.parent / "goprogs" / "mainpkg"
RELEASES = ("1.21.13", "1.22.10", "1.27.3")


def main() -> int:
    for release in RELEASES:
        try:
            toolchain.find(release)
        except toolchain.ToolchainError:
            toolchain.install(release)
        for kind, detail in (("schedtrace", False), ("scheddetail", True)):
            with tempfile.TemporaryDirectory() as tmp:
                result = capture(
                    ["go", "run", "."],
                    Path(tmp),
                    schedtrace_ms=20,
                    scheddetail=detail,
                    procs=3,
                    go=release,
                    cwd=PROG,
                )
                if not result.ok or result.schedtrace is None:
                    print(f"{release} {kind}: {result.meta['error']}", file=sys.stderr)
                    return 1
                target = HERE / f"{kind}-go{release}.log"
                shutil.copy(result.schedtrace, target)
                print(f"{target.name}: {result.meta['schedtrace_lines']} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
