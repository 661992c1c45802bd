"""The one error hierarchy of goblueprint.

The public promise: malformed input and failed external steps raise only these
types.  The CLI turns any of them into one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import errno
import os


class GoblueprintError(Exception):
    """Base of every error goblueprint raises on purpose."""


class UsageError(GoblueprintError):
    """A wrong argument or a missing file named on the command line."""


class PathError(UsageError):
    """A path that cannot be read or written as asked: every path, input or output, of
    every command is reported in these words (``cannot read X: is a directory``).

    The problem is the operating system's own description of an errno, so a check
    made before the work and an OSError caught during it read the same.
    """

    def __init__(
        self, path: str | os.PathLike[str], code: int, *, write: bool | None = False, hint: str = ""
    ) -> None:
        self.path = os.fspath(path)
        self.code = code
        self.write = write
        text = os.strerror(code)
        problem = text[:1].lower() + text[1:]
        verb = "use" if write is None else "write" if write else "read"  # None: not known which
        more = f" ({hint})" if hint else ""  # what the path was for, what to do instead
        super().__init__(f"cannot {verb} {self.path}: {problem}{more}")

    @classmethod
    def from_os(cls, path: str | os.PathLike[str], exc: OSError, *, write: bool | None = False) -> PathError:
        """The one-line form of an OSError met while reading or writing PATH."""
        return cls(path, exc.errno or errno.EIO, write=write)


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
