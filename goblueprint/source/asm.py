"""Call edges from Go assembly: ``TEXT runtime·name(SB)`` opens a function, ``CALL``/``JMP``
(and ARM's ``BL``/``B``) of ``runtime·other(SB)`` or ``·other(SB)`` is an edge to it."""

from __future__ import annotations

import re
from dataclasses import dataclass

# `·name` and `runtime·name` are this package; `pkg∕path·name` is another one (ignored).
_SYM = r"(?:runtime)?·(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:<[A-Za-z0-9_]+>)?\(SB\)"
_TEXT = re.compile(r"^\s*TEXT\s+" + _SYM)
_BRANCH = re.compile(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*:\s*)?(?P<op>CALL|JMP|BL|B)\s+" + _SYM)
_LOCAL_TEXT = re.compile(r"^\s*TEXT\s+\S+\(SB\)")


@dataclass(frozen=True)
class AsmEdge:
    caller: str
    callee: str
    file: str
    line: int
    op: str


def edges(files: dict[str, str]) -> list[AsmEdge]:
    out: list[AsmEdge] = []
    for rel in sorted(files):
        current: str | None = None
        for lineno, text in enumerate(files[rel].splitlines(), 1):
            m = _TEXT.match(text)
            if m:
                current = m.group("name")
                continue
            if _LOCAL_TEXT.match(text):
                current = None  # a file-local symbol (name<>) or another package's
                continue
            if current is None:
                continue
            b = _BRANCH.match(text)
            if b:
                out.append(AsmEdge(current, b.group("name"), rel, lineno, b.group("op")))
    return out


def text_symbols(files: dict[str, str]) -> dict[str, tuple[str, int]]:
    """Functions defined in assembly, with where."""
    out: dict[str, tuple[str, int]] = {}
    for rel in sorted(files):
        for lineno, text in enumerate(files[rel].splitlines(), 1):
            m = _TEXT.match(text)
            if m:
                out.setdefault(m.group("name"), (rel, lineno))
    return out
