"""The rich Console of the commands that print tables."""

from __future__ import annotations

from typing import Any


def table_console() -> Any:
    """A Console that never cuts a cell when the output is not a terminal.

    On a terminal, tables fit its width (columns that allow it wrap their text).
    Piped or redirected, there is no width to fit: rich would assume 80 columns and
    cut or wrap names, so the width is made unbounded and each table takes the width
    of its widest row.
    """
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = 1 << 16
    return console
