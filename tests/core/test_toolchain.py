from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from goblueprint import toolchain
from goblueprint.cli import main
from goblueprint.errors import ToolchainError


def test_bundled_toolchain_is_a_real_goroot() -> None:
    tc = toolchain.bundled()
    assert tc is not None
    out = tc.run(["env", "GOROOT", "GOVERSION"]).stdout.split()
    assert Path(out[0]).resolve() == tc.goroot
    assert out[1] == f"go{tc.version}"
    assert (tc.goroot / "src" / "runtime" / "proc.go").exists()


@pytest.mark.parametrize(
    ("spec", "release"),
    [("1.22", "1.22.10"), ("1.27.1", "1.27.1"), ("go1.21", "1.21.13"), ("1.26", "1.26.6")],
)
def test_resolve_release(spec: str, release: str) -> None:
    assert toolchain.resolve_release(spec) == release


@pytest.mark.parametrize("spec", ["1.19", "banana", "1", ""])
def test_resolve_release_rejects(spec: str) -> None:
    with pytest.raises(ToolchainError):
        toolchain.resolve_release(spec)


def test_find_unknown_release_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GOBLUEPRINT_CACHE", str(tmp_path))
    monkeypatch.delenv("GOBLUEPRINT_GO", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ToolchainError, match=r"goblueprint toolchain install 1\.21"):
        toolchain.find("1.21")


def test_env_override_takes_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    tc = toolchain.bundled()
    assert tc is not None
    monkeypatch.setenv("GOBLUEPRINT_GO", str(tc.go))
    found = toolchain.find()
    assert found.origin == "env" and found.goroot == tc.goroot


def test_env_override_missing_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOBLUEPRINT_GO", "/no/such/go")
    with pytest.raises(ToolchainError, match="does not exist"):
        toolchain.find()


@pytest.mark.slow
def test_install_and_list_second_release(go_toolchain, capsys: pytest.CaptureFixture[str]) -> None:
    tc = go_toolchain("1.22")
    assert tc.version.startswith("1.22.")
    version = subprocess.run(
        [str(tc.go), "version"], env=tc.env(), capture_output=True, text=True, check=True
    )
    assert f"go{tc.version}" in version.stdout
    assert main(["toolchain", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert any(r["version"] == tc.version and r["origin"] == "installed" for r in rows)
    assert sum(r["default"] for r in rows) == 1


def test_cli_install_bad_version_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["toolchain", "install", "1.3"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("goblueprint: error:")
