"""Find a GOROOT and load the helper's facts about one of its packages, cached by content."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goblueprint import toolchain
from goblueprint.errors import GoblueprintError, PathError, SourceError, ToolchainError
from goblueprint.source import asm, helper, tables
from goblueprint.toolchain.cachelock import publish

FACTS_FORMAT = 3  # bump when the meaning of cached facts changes


@dataclass(frozen=True)
class Goroot:
    path: Path
    version: str


# What a command with --go offers instead of a --goroot that is no GOROOT.
_USE_GO = "install a release with: goblueprint toolchain install 1.22 (then use --go 1.22)"


def resolve(goroot: str | None = None, go: str | None = None, *, instead: str = _USE_GO) -> Goroot:
    """The GOROOT named by --goroot DIR or --go VERSION (default: the bundled release).
    INSTEAD: what the error of a --goroot that is no GOROOT offers in its place (a command
    without --go says its own)."""
    if goroot and go:
        raise SourceError("give either --goroot or --go, not both")
    if goroot:
        path = Path(goroot).expanduser()
        if not path.is_dir():
            code = errno.ENOTDIR if path.exists() else errno.ENOENT
            raise PathError(path, code, hint=f"--goroot names a GOROOT; or {instead}")
        if not (path / "src" / "runtime").is_dir():
            raise SourceError(f"{goroot} is not a GOROOT (no src/runtime); {instead}")
        try:
            version = toolchain.goroot_version(path)
        except ToolchainError:
            version = "unknown"
        return Goroot(path.resolve(), version)
    try:
        tc = toolchain.find(go)
    except GoblueprintError as exc:
        raise SourceError(str(exc)) from exc
    return Goroot(tc.goroot, tc.version)


def _content_key(root: Goroot, pkg: str, extra: str) -> str:
    """Cheap fingerprint of a package directory: names, sizes and mtimes of its files."""
    digest = hashlib.sha256()
    digest.update(f"{FACTS_FORMAT}|{helper.helper_source_hash()}|{root.path}|{root.version}|{extra}".encode())
    pkg_dir = root.path / "src" / pkg
    try:
        entries = sorted(os.scandir(pkg_dir), key=lambda e: e.name)
    except OSError as exc:
        raise SourceError(f"cannot read {pkg_dir}: {exc}") from exc
    for entry in entries:
        if entry.is_file():
            st = entry.stat()
            digest.update(f"{entry.name}:{st.st_size}:{st.st_mtime_ns};".encode())
    return digest.hexdigest()[:24]


def _tool_tags(root: Goroot) -> str:
    """The release's own build tags (goexperiments differ between releases and pick files)."""
    go = root.path / "bin" / "go"
    if not go.exists():
        return ""
    tc = toolchain.Toolchain(root.version, root.path, "goroot")
    try:
        out = tc.run(["list", "-f", "{{join context.ToolTags \",\"}}", "runtime"], cwd=root.path / "src",
                     env={"GOOS": tables.GOOS, "GOARCH": tables.GOARCH, "GOFLAGS": ""})  # fmt: skip
    except ToolchainError:
        return ""
    return out.stdout.strip()


def _cached(kind: str, key: str, produce) -> Any:
    path = toolchain.cache_dir() / "source" / f"{kind}-{key}.json"
    # Concurrent processes wanting the same facts: one computes, the others read its result.
    # A damaged entry counts as missing and is made again.
    value: list[Any] = []

    def ready() -> bool:
        try:
            value.append(json.loads(path.read_bytes()))
        except (OSError, ValueError):
            return False
        return True

    def build(out: Path) -> None:
        value.append(produce())
        out.write_text(json.dumps(value[-1], separators=(",", ":")))

    publish(path, build, ready=ready)
    return value[-1]


def load(root: Goroot, pkg: str = tables.PACKAGE) -> dict[str, Any]:
    """Facts of PKG in ROOT for linux/amd64: consts, funcs with calls, status write sites, structs."""
    fields = ",".join(tables.STATUS_FIELDS)
    key = _content_key(root, pkg, f"{pkg}|{fields}|{tables.GOOS}/{tables.GOARCH}")

    def produce() -> dict[str, Any]:
        args = ["-pkg", pkg, "-fields", fields, "-goos", tables.GOOS, "-goarch", tables.GOARCH]
        tags = _tool_tags(root)
        if tags:
            args += ["-tooltags", tags]
        data = helper.run_helper("facts", root.path, args)
        data["go_version"] = root.version
        text = _read_asm(root.path, data.get("sfiles") or [])
        # Assembly is scanned once here, so a warm load does no regex work.
        data["asm_edges"] = [[e.caller, e.callee, e.file, e.line, e.op] for e in asm.edges(text)]
        data["asm_symbols"] = {name: list(where) for name, where in asm.text_symbols(text).items()}
        return data

    data = _cached("facts", key, produce)
    if data.get("parse_errors"):
        # A blueprint of a package with unparsable files would silently miss transitions.
        errs = data["parse_errors"]
        raise SourceError(f"{len(errs)} file(s) of {pkg} do not parse, first: {errs[0]}")
    return data


def _read_asm(goroot: Path, sfiles: list[str]) -> dict[str, str]:
    out = {}
    for rel in sfiles:
        try:
            out[rel] = (goroot / rel).read_text(errors="replace")
        except OSError as exc:
            raise SourceError(f"cannot read {rel}: {exc}") from exc
    return out


def contracts(root: Goroot, packages: list[str]) -> dict[str, Any]:
    """Interfaces of PACKAGES, their method sets, embeddings and implementers."""
    for pkg in packages:
        if not pkg or pkg.startswith(("-", "/", ".")) or not (root.path / "src" / pkg).is_dir():
            raise SourceError(f"no package {pkg!r} in {root.path / 'src'}")
    key = hashlib.sha256("|".join(_content_key(root, p, "contracts") for p in packages).encode()).hexdigest()[
        :24
    ]
    return _cached("contracts", key, lambda: helper.run_helper("contracts", root.path, packages))


def parse_check(root: Goroot) -> dict[str, Any]:
    """Parse every non-testdata .go file under GOROOT/src; returns {"files": n, "errors": [...]}."""
    return helper.run_helper("parsecheck", root.path, [])
