"""Per-binary cache of parsed indexes (symbols, DWARF types, functions, lines).

Keyed by the SHA-256 of the file's bytes plus a format version, so a rebuilt
binary never sees a stale index and a copied one reuses it.  Values are JSON:
plain data only, never pickles, because the cache directory is not trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from goblueprint.toolchain import cache_dir

# Bump when the shape of any cached index changes.
FORMAT = "b5"


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
    path = _path(key, part)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(value, fh, separators=(",", ":"))
        os.replace(tmp, path)
    except OSError:
        # A read-only cache only costs speed.
        pass
