"""Lay out a DOT graph with Graphviz's `dot` (Debian package graphviz; .ci/run installs it)."""

from __future__ import annotations

import shutil
import subprocess

from goblueprint.errors import SourceError


def svg(dot_text: str) -> str:
    """DOT_TEXT laid out by `dot -Tsvg`: layered, with edge labels placed so that they do not overlap."""
    exe = shutil.which("dot")
    if exe is None:
        raise SourceError("drawing SVG or HTML needs Graphviz's dot: apt-get install graphviz")
    try:
        proc = subprocess.run([exe, "-Tsvg"], input=dot_text.encode(), capture_output=True, timeout=120,
                              check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        raise SourceError(f"cannot run Graphviz dot: {exc}") from exc
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise SourceError(f"Graphviz dot failed: {detail[-1] if detail else proc.returncode}")
    text = proc.stdout.decode()
    # Drop the XML prolog and DOCTYPE so that the SVG can be inlined in HTML as well.
    start = text.find("<svg")
    return text[start:] if start >= 0 else text
