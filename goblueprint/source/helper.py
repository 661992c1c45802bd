"""Build (once, cached) and run the Go helper that turns Go source into JSON facts."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

from goblueprint import toolchain
from goblueprint.errors import SourceError, ToolchainError
from goblueprint.toolchain.cachelock import publish


def _helper_files() -> list[str]:
    # Every Go file of the helper's package: helpers add facts in files of their own.
    pkg = resources.files("goblueprint.source") / "gohelper"
    return sorted(e.name for e in pkg.iterdir() if e.name.endswith(".go") or e.name == "go.mod")


def helper_source_hash() -> str:
    """Hash of the helper's source, part of every cache key that depends on its output."""
    digest = hashlib.sha256()
    pkg = resources.files("goblueprint.source") / "gohelper"
    for name in _helper_files():
        digest.update(name.encode())
        digest.update((pkg / name).read_bytes())
    return digest.hexdigest()[:16]


def _builder() -> toolchain.Toolchain:
    # The helper is always built with the bundled release so that its parser is the newest
    # one; it reads older GOROOTs as plain files.
    return toolchain.bundled() or toolchain.find()


def helper_path() -> Path:
    """The built helper binary, building it into the cache on first use."""
    tc = _builder()
    key = f"{helper_source_hash()}-go{tc.version}"
    target = toolchain.cache_dir() / "source" / f"gohelper-{key}"
    # One build at a time (parallel test workers, concurrent CLI calls); the others wait and reuse it.
    publish(
        target,
        lambda out: _build(tc, out),
        ready=lambda: (target / "gohelper").exists(),
        announce=f"building the Go source reader with Go {tc.version}",
    )
    return target / "gohelper"


def _build(tc: toolchain.Toolchain, out_dir: Path) -> None:
    src = resources.files("goblueprint.source") / "gohelper"
    build_dir = out_dir / "src"
    build_dir.mkdir(parents=True)
    for name in _helper_files():
        (build_dir / name).write_bytes((src / name).read_bytes())
    tc.run(
        ["build", "-trimpath", "-o", str(out_dir / "gohelper"), "."],
        cwd=build_dir,
        env={"GOFLAGS": "-mod=mod"},
    )
    shutil.rmtree(build_dir)


def run_helper(mode: str, goroot: Path, args: list[str]) -> dict[str, Any]:
    """Run the helper and return its JSON output."""
    cmd = [str(helper_path()), mode, "-goroot", str(goroot), *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=600, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolchainError(f"cannot run the source helper: {exc}") from exc
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise SourceError(f"source helper failed on {goroot}: {detail[-1] if detail else proc.returncode}")
    try:
        return json.loads(proc.stdout)
    except ValueError as exc:
        raise SourceError(f"source helper wrote unreadable output: {exc}") from exc
