"""One cache entry made once, however many processes want it at the same moment.

Every cache entry goblueprint makes (Go toolchains, the compiled trace kernels,
the Go source helper, parsed binary indexes, the test suite's binaries and
traces) goes through ``publish``: the entry's own file lock (``NAME.lock``
beside it) is taken, the entry is built into a temporary directory whose name
no other process uses, and the result is renamed into place in one step.  A
second process asking for the same entry blocks on the lock, then finds the
entry there and reuses it, so nobody sees a half-made entry and nobody renames
another's work away.  A process killed mid-build leaves only its temporary
directory, which the next builder of that entry removes.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

# Temporary directories are hidden (leading dot) so that listings of a cache
# directory (e.g. the installed toolchains) never mistake one for an entry.
_TMP_PREFIX = "."
_TMP_SUFFIX = ".tmp"


def lock_path(target: Path) -> Path:
    return target.with_name(target.name + ".lock")


def note(message: str) -> None:
    """One progress line on stderr, terminal or not: a long first run must never look hung."""
    print(f"goblueprint: {message}", file=sys.stderr, flush=True)


@contextmanager
def entry_lock(target: Path, *, waiting: str | None = None) -> Iterator[None]:
    """Hold TARGET's lock; if another process holds it, say so (when WAITING names the work) and wait."""
    lock = lock_path(target)
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            start = time.monotonic()
            if waiting:
                note(f"waiting for another process {waiting}")
            fcntl.flock(handle, fcntl.LOCK_EX)
            if waiting:
                note(f"the other process finished {waiting} ({time.monotonic() - start:.1f} s)")
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def publish(
    target: Path,
    build: Callable[[Path], None],
    *,
    ready: Callable[[], bool] | None = None,
    announce: str | None = None,
    hint: str = "",
) -> Path:
    """Make TARGET (a file or a directory) unless it is there; returns TARGET.

    BUILD(out) creates the entry at OUT, a path with TARGET's own name inside a
    private temporary directory (so tools that care about the file name, such as
    an extension module's loader, see the right one).  READY says whether the
    entry is usable (default: TARGET exists); it is asked again under the lock, so
    the work is done once.  ANNOUNCE, a phrase such as "installing Go 1.22.10",
    prints one line before the build (with HINT, e.g. how long it takes) and one
    with its duration after it.
    An exception from BUILD propagates and leaves no entry behind.
    """
    done = ready or target.exists
    if done():
        return target
    with entry_lock(target, waiting=announce):
        if done():
            return target
        _remove_leftovers(target)
        tmp_dir = target.with_name(f"{_TMP_PREFIX}{target.name}.{os.getpid()}.{time.time_ns()}{_TMP_SUFFIX}")
        tmp_dir.mkdir(parents=True)
        start = time.monotonic()
        if announce:
            note(f"{announce} (first use only{'; ' + hint if hint else ''}) ...")
        try:
            out = tmp_dir / target.name
            build(out)
            if not out.exists() and not out.is_symlink():
                raise FileNotFoundError(f"the build of {target} made nothing")
            _clear(target)  # an unusable old entry (READY said no) makes way
            os.rename(out, target)
        finally:
            shutil.rmtree(tmp_dir, ignore_errors=True)
        if announce:
            note(f"{announce}: done in {time.monotonic() - start:.1f} s")
    return target


def write_atomic(path: Path, data: bytes) -> None:
    """Write PATH whole or not at all (a unique temporary file renamed over it): readers never see half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{_TMP_PREFIX}{path.name}.{os.getpid()}.{time.time_ns()}{_TMP_SUFFIX}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _clear(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _remove_leftovers(target: Path) -> None:
    # Only the holder of the entry's lock builds it, so every temporary directory of
    # this entry found now belongs to a builder that died.
    # The name is matched exactly: "go1.22.1" must not take "go1.22.10"'s directory.
    own = re.compile(re.escape(f"{_TMP_PREFIX}{target.name}.") + r"\d+\.\d+" + re.escape(_TMP_SUFFIX))
    for stale in target.parent.glob(f"{_TMP_PREFIX}{target.name}.*{_TMP_SUFFIX}"):
        if own.fullmatch(stale.name):
            shutil.rmtree(stale, ignore_errors=True)
