"""Checks of the paths named on the command line, made before any work.

Every command checks its inputs and outputs here, so a missing file, a
directory given for a file, an unwritable output or a missing parent directory
reads the same whatever the command (``goblueprint.errors.PathError``), and a
long analysis never ends in "cannot write" for a path that was wrong from the
start.  Writes themselves go through :func:`writing`, which words an OSError
met later (a disk that fills, a check that root's permissions made pointless)
the same way.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from goblueprint.errors import PathError, UsageError


def _stat(path: Path, *, write: bool) -> os.stat_result | None:
    """The path's stat, None when it does not exist; other failures are PathErrors."""
    try:
        return path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:  # a parent that is a file (ENOTDIR), a loop, no search permission
        raise PathError.from_os(path, exc, write=write) from None


def input_file(name: str | os.PathLike[str]) -> Path:
    """An existing, readable file (anything but a directory: FIFOs and devices are fine)."""
    path = Path(name)
    st = _stat(path, write=False)
    if st is None:
        raise PathError(path, errno.ENOENT)
    if stat.S_ISDIR(st.st_mode):
        raise PathError(path, errno.EISDIR)
    if not os.access(path, os.R_OK):
        raise PathError(path, errno.EACCES)
    return path


def input_dir(name: str | os.PathLike[str]) -> Path:
    """An existing, readable directory (a capture or lab output folder)."""
    path = Path(name)
    st = _stat(path, write=False)
    if st is None:
        raise PathError(path, errno.ENOENT)
    if not stat.S_ISDIR(st.st_mode):
        raise PathError(path, errno.ENOTDIR)
    if not os.access(path, os.R_OK | os.X_OK):
        raise PathError(path, errno.EACCES)
    return path


def _parent_ready(path: Path) -> None:
    parent = path.parent
    st = _stat(parent, write=True)
    if st is None:
        raise PathError(path, errno.ENOENT, write=True)
    if not stat.S_ISDIR(st.st_mode):
        raise PathError(path, errno.ENOTDIR, write=True)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PathError(path, errno.EACCES, write=True)


def output_file(name: str | os.PathLike[str]) -> Path:
    """A file that can be (over)written: not a directory, in an existing writable directory."""
    path = Path(name)
    st = _stat(path, write=True)
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise PathError(path, errno.EISDIR, write=True)
        if not os.access(path, os.W_OK):
            raise PathError(path, errno.EACCES, write=True)
    _parent_ready(path)
    return path


def output_dir(name: str | os.PathLike[str], *, create: bool = True) -> Path:
    """A directory to write into, created (with its parents) if it does not exist.

    Created now rather than checked, because only creating it tells for certain
    (root passes every permission check, /proc refuses new entries anyway).
    ``create=False`` checks what can be checked without leaving a directory
    behind, for a command that may still fail before it writes anything.
    """
    path = Path(name)
    st = _stat(path, write=True)
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise PathError(path, errno.ENOTDIR, write=True)
    if not create:
        ancestor = path
        while st is None:  # the nearest existing ancestor must be a writable directory
            ancestor = ancestor.parent
            st = _stat(ancestor, write=True)
        if not stat.S_ISDIR(st.st_mode):
            raise PathError(path, errno.ENOTDIR, write=True)
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise PathError(path, errno.EACCES, write=True)
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a parent is a file
        raise PathError(path, errno.ENOTDIR, write=True) from None
    except OSError as exc:
        raise PathError.from_os(path, exc, write=True) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise PathError(path, errno.EACCES, write=True)
    return path


@contextmanager
def reading(name: str | os.PathLike[str]) -> Iterator[None]:
    """Any OSError while reading NAME (checked, yet gone or unreadable since) as a PathError."""
    try:
        yield
    except OSError as exc:
        raise PathError.from_os(exc.filename or name, exc) from None


@contextmanager
def writing(name: str | os.PathLike[str]) -> Iterator[None]:
    """Any OSError while writing NAME (or a file inside it) is reported as a PathError."""
    try:
        yield
    except OSError as exc:
        raise PathError.from_os(exc.filename or name, exc, write=True) from None


# Extensions that name a file format: an output whose extension names a format the
# command cannot write is refused, never written in another format under that name.
_FORMAT_EXTENSIONS = frozenset(
    ".png .jpg .jpeg .gif .webp .pdf .svg .html .htm .json .csv .txt .md .dot .mmd .gz .pb "
    ".pprof .parquet .perfetto-trace .pftrace .proto .xml .yaml .yml".split()
)


def output_format(
    name: str | os.PathLike[str],
    known: dict[str, str],
    *,
    what: str,
    chosen: str | None = None,
    default: str | None = None,
    hints: dict[str, str] | None = None,
) -> str:
    """The format an output's extension names (KNOWN maps extension -> format).

    CHOSEN is a format asked for by a flag: it must agree with the extension when
    that names one.  Without either, DEFAULT applies, unless the extension names a
    format this command does not write.  HINTS add advice by extension ("" for any).
    """
    path = Path(name)
    lower = path.name.lower()
    exts = sorted(known, key=len, reverse=True)  # ".pb.gz" before ".gz"
    ext = next((e for e in exts if lower.endswith(e)), None)
    if ext is not None:
        fmt = known[ext]
        if chosen is not None and chosen != fmt:
            raise UsageError(f"cannot write {path}: the name says {fmt} ({ext}), but {chosen} was asked for")
        return fmt
    suffix = path.suffix.lower()
    foreign = suffix in _FORMAT_EXTENSIONS
    if not foreign and chosen is not None:
        return chosen
    if not foreign and default is not None:
        return default
    hints = hints or {}
    hint = hints.get(suffix) or hints.get("", "")
    names = ", ".join(known)
    raise UsageError(
        f"cannot write {path}: {what} is written as {names}{f', not {suffix}' if suffix else ''}"
        f"{f' ({hint})' if hint else ''}"
    )
