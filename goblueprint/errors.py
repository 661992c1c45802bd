"""The one error hierarchy of goblueprint.

The public promise: malformed input and failed external steps raise only these
types.  The CLI turns any of them into one line on stderr and a non-zero exit.
"""

from __future__ import annotations


class GoblueprintError(Exception):
    """Base of every error goblueprint raises on purpose."""


class UsageError(GoblueprintError):
    """A wrong argument or a missing file named on the command line."""


class ToolchainError(GoblueprintError):
    """No usable Go toolchain, or a go command that failed."""


class TraceError(GoblueprintError):
    """A Go execution trace that cannot be read or that Go's reader rejects.

    Carries where the problem was found: the byte offset in the file, the
    generation and the M (thread) whose batch was being read, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        generation: int | None = None,
        m: int | None = None,
    ) -> None:
        self.message = message
        self.offset = offset
        self.generation = generation
        self.m = m
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        if self.generation is not None:
            where.append(f"generation {self.generation}")
        if self.m is not None:
            where.append(f"M {self.m}")
        return f"{self.message} ({', '.join(where)})" if where else self.message


class UnsupportedTraceVersion(TraceError):
    """A trace in a format version goblueprint does not read (yet)."""


class SourceError(GoblueprintError):
    """Go source that cannot be analysed, a missing GOROOT, a bad diagram."""


class BinaryError(GoblueprintError):
    """A binary that is not a readable ELF file, or lacks what was asked for."""


class CaptureError(GoblueprintError):
    """A program that could not be built, run or recorded."""


class LabError(GoblueprintError):
    """A lab build that cannot be made, or lab records that cannot be read.

    Carries the byte offset in the records file when the problem is in one.
    """

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        self.message = message
        self.offset = offset
        super().__init__(f"{message} (offset {offset})" if offset is not None else message)
