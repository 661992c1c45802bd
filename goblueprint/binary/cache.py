"""Per-binary cache of parsed indexes (symbols, DWARF types, functions, lines).

Keyed by the SHA-256 of the file's bytes plus a format version, so a rebuilt
binary never sees a stale index and a copied one reuses it.  Values are JSON:
plain data only, never pickles, because the cache directory is not trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from goblueprint.toolchain import cache_dir
from goblueprint.toolchain.cachelock import entry_lock, write_atomic

# Bump when the shape of any cached index changes.
FORMAT = "b7"  # b6: stripped binaries counted from runtime.text (moduledata); b7: undefined symbols in UND


def key_of(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()[:32] + "-" + FORMAT


def _path(key: str, part: str) -> Path:
    return cache_dir() / "binary" / key / f"{part}.json"


def load(key: str, part: str) -> Any | None:
    if os.environ.get("GOBLUEPRINT_NO_CACHE"):
        return None
    try:
        with open(_path(key, part), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        # Missing or half-written entries are simply rebuilt.
        return None


def save(key: str, part: str, value: Any) -> None:
    if os.environ.get("GOBLUEPRINT_NO_CACHE"):
        return
    try:
        write_atomic(_path(key, part), json.dumps(value, separators=(",", ":")).encode())
    except OSError:
        # A read-only cache only costs speed.
        pass


def get(key: str, part: str, build: Callable[[], dict[str, Any]], *, group: str | None = None) -> Any:
    """PART of KEY's indexes: cached, else made by BUILD() and saved.

    BUILD returns every part its pass makes ({part: value}); GROUP names that pass
    (default: PART), and is what concurrent processes lock on, so one of them parses
    the binary and the others wait and read its result.  None if BUILD made no PART.
    """
    got = load(key, part)
    if got is not None:
        return got
    entry = _path(key, group or part)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    if os.environ.get("GOBLUEPRINT_NO_CACHE") or not os.access(entry.parent, os.W_OK):
        # No cache, or a read-only one: build here, as a process without a cache would.
        return build().get(part)
    with entry_lock(entry):
        got = load(key, part)
        if got is not None:
            return got
        return _build_and_save(key, part, build)


def _build_and_save(key: str, part: str, build: Callable[[], dict[str, Any]]) -> Any:
    built = build()
    for name, value in built.items():
        save(key, name, value)
    return built.get(part)
