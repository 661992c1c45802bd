"""Ingest once: a trace's tables written as Parquet into the cache, read by every later view.

The first analysis of a trace makes one pass and stores what every view reads:

* the SQL tables of ``goblueprint.timeline.tables`` (events, intervals, goroutines,
  metrics, flows, stacks, lanes, states), ``events`` with a row group per
  generation (a large one cut in groups of ``tables._EVENT_GROUP`` rows), so DuckDB
  reads them where they lie;
* the ``Timeline`` itself (its strings and small frames under ``timeline/``; its spans,
  flows and counters are the SQL tables intervals, flows and metrics, read back as the
  Timeline's by ``timeline.stored``), so the timeline page and the Perfetto/Chrome exports
  start without a pass;
* under ``views/``, what pprof and metrics read: the stays of every pprof type
  (which goroutine sat runnable, blocked or in a syscall, when, from which stack),
  so ``trace pprof`` of any type is a group-by over them; Go's goroutine summary
  and the mutator utilization of the default MMU flags, so ``trace metrics`` makes
  no pass (other MMU flags make their own);
* ``manifest.json``, written last: the trace's size and content hash, the code
  that made the tables (a hash of the reader's and the timeline's sources), the
  trace's version and time range, how many events were read and, for a trace that
  breaks part-way, its error, so a later view reports the same failure.

An entry lives in ``<cache>/ingest/<content hash>`` and is found by the trace's
content, wherever the file is.  It is trusted only if its manifest names the
same content and the same code and every file has the size and hash the
manifest recorded; anything else (stale code, a truncated or altered file, a
missing one) is rebuilt.  A file whose hash matched once and whose stat data (size,
times, inode) is unchanged since is not hashed again (``verified.json``, git's rule).  Entries are made under the cache's lock
(``toolchain.cachelock``): concurrent views of one trace ingest it once.

What is stored is what the views show by default: goblueprint capture's own
goroutines left out (``capture_marks``).  ``--show-capture`` asks for what the
tables do not hold, so it makes its own pass.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from goblueprint.errors import GoblueprintError, TraceError
from goblueprint.timeline.mmu import DEFAULT_FLAGS
from goblueprint.timeline.model import Timeline, empty_frame
from goblueprint.timeline.summary_tables import summary_frames, summary_of, utilization_frame, utilization_of
from goblueprint.timeline.write_behind import WriteBehind
from goblueprint.trace.progress import STAGE_LINE_BYTES

if TYPE_CHECKING:
    from goblueprint.timeline.batches import TimelineScans
    from goblueprint.timeline.mmu import Series
    from goblueprint.timeline.pprof import StayTables
    from goblueprint.timeline.stored import Texts
    from goblueprint.timeline.summary import Summary

MANIFEST = "manifest.json"
TIMELINE_DIR = "timeline"
# What pprof and metrics read, not SQL tables: every pprof type's stays (pprof.STAYS_SCHEMA),
# the mutator utilization of the default MMU flags and Go's goroutine summary (summary_tables).
VIEWS_DIR = "views"
STAYS = "profile_stays"
UTILIZATION = "utilization"
_TIMELINE_FRAMES = ("spans", "flows", "counters", "instants", "lanes", "stack_frames")
# How the files of an entry are laid out, checked with the code: the Timeline's largest tables
# stored once, as SQL tables (timeline.stored); an entry of another layout is made again.
# 3: the lanes tables one row group (a lane cut in sort pieces is listed once, the table
# made whole).
LAYOUT = 3
_READ_BLOCK = 1 << 20
# Traces from this size on take seconds to ingest: say so on stderr, terminal or not.
ANNOUNCE_BYTES = STAGE_LINE_BYTES
# Code whose change changes the tables: the reader and everything under timeline/.
_PRODUCERS = ("trace", "timeline")


def content_hash(path: Path, block: int = _READ_BLOCK) -> str:
    """BLAKE2b-128 of the file's bytes: the entry's key (a trace found by content, not by name)."""
    h = hashlib.blake2b(digest_size=16)
    buf = bytearray(block)  # one buffer read into again and again: no block allocated per read
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buf):
            h.update(view[:n])
    return h.hexdigest()


@cache
def code_fingerprint() -> str:
    """A hash of the sources that produce the tables: an entry made by other code is stale."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(digest_size=16)
    for package in _PRODUCERS:
        for src in sorted((root / package).rglob("*.py")):
            h.update(str(src.relative_to(root)).encode())
            h.update(src.read_bytes())
    return h.hexdigest()


def ingest_root() -> Path:
    from goblueprint.toolchain import cache_dir

    return cache_dir() / "ingest"


@dataclass
class Ingested:
    """One ingested trace: its tables' files and what its manifest says.

    Has the ``error`` and ``events_read`` of a partial Reader, so the commands' one
    rule for broken traces (``cli._partial.finish``) applies to it unchanged.
    """

    path: Path  # the directory holding the tables
    manifest: dict[str, Any]

    @property
    def error(self) -> TraceError | None:
        e = self.manifest["error"]
        if e is None:
            return None
        return TraceError(e["message"], offset=e["offset"], generation=e["generation"], m=e["m"])

    @property
    def events_read(self) -> int:
        return int(self.manifest["events_read"])

    def table_files(self) -> dict[str, Path]:
        """The SQL tables (name -> Parquet file), in name order."""
        return {name: self.path / f"{name}.parquet" for name in sorted(self.manifest["tables"])}

    def frames(self, names: tuple[str, ...] | None = None) -> dict[str, pl.DataFrame]:
        return {n: pl.read_parquet(p) for n, p in self.table_files().items() if names is None or n in names}

    def strings(self) -> list[str]:
        """The Timeline's strings (its string ids index them)."""
        return pl.read_parquet(self.path / TIMELINE_DIR / "strings.parquet")["s"].to_list()

    def timeline_file(self, table: str) -> Path:
        """The file holding the Timeline's TABLE: for spans, flows and counters the SQL table
        stored for it, to read through ``timeline.stored.as_timeline`` (or ``timeline_scan``)."""
        from goblueprint.timeline.stored import SQL_TABLE

        if table in SQL_TABLE:
            return self.path / f"{SQL_TABLE[table]}.parquet"
        return self.path / TIMELINE_DIR / f"{table}.parquet"

    def texts(self, strings: list[str] | None = None) -> Texts:
        """What maps the stored text of the Timeline's tables back to its string ids
        (timeline.stored.as_timeline); STRINGS: the Timeline's, read if not given."""
        from goblueprint.timeline.stored import Texts

        return Texts(self.strings() if strings is None else strings, self.manifest["timeline"]["texts"])

    def timeline_scan(self, table: str, texts: Texts | None = None) -> pl.LazyFrame:
        """A scan of the Timeline's TABLE as the Timeline holds it (TEXTS: self.texts(),
        made if not given)."""
        from goblueprint.timeline.stored import SQL_TABLE, as_timeline

        scan = pl.scan_parquet(self.timeline_file(table))
        if table not in SQL_TABLE:
            return scan
        return as_timeline(table, scan, self.texts() if texts is None else texts)

    def profiles(self) -> StayTables:
        """What ``trace pprof`` is made from, read back as the pass made it; the stays as a scan
        of their file, which a profile reads a batch at a time (the file is in type order, so
        a type's rows are read alone)."""
        from goblueprint.timeline.pprof import StayTables

        d = self.path / TIMELINE_DIR
        meta = self.manifest["profiles"]
        return StayTables(
            stays=pl.scan_parquet(self.path / VIEWS_DIR / f"{STAYS}.parquet"),
            goroutines=pl.read_parquet(
                self.path / "goroutines.parquet", columns=["id", "start_time", "end_time"]
            ),
            stack_frames=pl.read_parquet(d / "stack_frames.parquet"),
            strings=pl.read_parquet(d / "strings.parquet")["s"].to_list(),
            trace_end=meta["trace_end"],
            valid_events=meta["valid_events"],
        )

    def summary(self) -> Summary:
        """Go's goroutine summary of the trace, as the pass made it (summary_tables)."""
        d = self.path / VIEWS_DIR
        frames = {n: pl.read_parquet(d / f"summary_{n}.parquet") for n in ("goroutines", "regions", "tasks")}
        meta = self.manifest["summary"]
        return summary_of(frames, meta["start_time"], meta["end_time"])

    def utilization(self, flags: int) -> list[Series]:
        """The mutator utilization functions for the MMU FLAGS (only the default ones are stored)."""
        meta = self.manifest["utilization"]
        if flags != meta["flags"]:
            raise GoblueprintError(f"the ingested tables hold the MMU of flags {meta['flags']}, not {flags}")
        return utilization_of(
            pl.read_parquet(self.path / VIEWS_DIR / f"{UTILIZATION}.parquet"), meta["series"]
        )

    def timeline_scans(self) -> TimelineScans:
        """The trace's Timeline with its spans and flows as scans of their files, which a view
        reads a batch at a time (timeline.batches) instead of holding them."""
        from goblueprint.timeline.batches import TimelineScans

        meta = self.manifest["timeline"]
        texts = self.texts()
        return TimelineScans(
            start_ns=meta["start_ns"],
            end_ns=meta["end_ns"],
            strings=texts.strings,
            go_version=meta["go_version"],
            spans=self.timeline_scan("spans", texts),
            flows=self.timeline_scan("flows", texts),
        )

    def timeline(
        self, *, lanes: Iterable[int] | None = None, tables: Iterable[str] | None = None
    ) -> Timeline:
        """The trace's Timeline, read back exactly as the pass built it.

        A view that needs a part only says which: LANES keeps the spans and lanes of those lane
        kinds (the spans are sorted by lane kind, so the Parquet statistics skip the rest
        unread), TABLES names the tables to read (the others come back empty).
        """
        meta = self.manifest["timeline"]
        texts = self.texts()
        strings = texts.strings
        wanted = set(_TIMELINE_FRAMES if tables is None else tables)
        kinds = None if lanes is None else sorted(int(k) for k in lanes)
        frames = {}
        for name in _TIMELINE_FRAMES:
            if name not in wanted:
                frames[name] = empty_frame(name)
                continue
            frame = self.timeline_scan(name, texts)
            if kinds is not None and name in ("spans", "lanes"):
                frame = frame.filter(pl.col("lane_kind").is_in(kinds))
            frames[name] = frame.collect()
        return Timeline(
            start_ns=meta["start_ns"], end_ns=meta["end_ns"], strings=strings, go_version=meta["go_version"],
            **frames,
        )  # fmt: skip


def ingest(
    trace: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str] | None = None,
    progress: Callable[[int], None] | None = None,
    force: bool = False,
) -> Ingested:
    """The ingested tables of TRACE: from the cache if a sound entry is there, else made now.

    OUT writes (or checks) the entry in that directory instead of the cache.  A trace
    Go's reader rejects before any usable event raises its TraceError and stores nothing.
    """
    from goblueprint.toolchain.cachelock import publish

    src = Path(trace)
    key = content_hash(src)
    if out is not None:
        return _ingest_to(src, key, Path(out), progress, force)
    target = ingest_root() / key

    found: list[Ingested] = []

    def sound() -> bool:
        got = None if force else _check(target, key)
        if got is not None:
            found.append(got)
        return got is not None

    size = src.stat().st_size
    wrote: list[bool] = []

    def write(tmp: Path) -> None:
        _write(src, key, tmp, progress)
        wrote.append(True)

    publish(
        target,
        write,
        ready=sound,
        # A line before and after a pass long enough to wonder about; small traces stay quiet.
        announce=f"ingesting {src.name} ({size / 1e6:.1f} MB)" if size >= ANNOUNCE_BYTES else None,
        hint="later views of it read the stored tables",
    )
    if found and not wrote:  # checked whole just now: checking again would hash every file twice
        return found[-1]
    return _sound(target, key, hashes=not wrote)


def _ingest_to(
    src: Path, key: str, out: Path, progress: Callable[[int], None] | None, force: bool
) -> Ingested:
    """Ingest into a directory of the user's: made whole beside it, then renamed into place.

    An existing OUT is replaced only if it is an entry (it has a manifest); anything else is
    the user's and stays untouched.
    """
    from goblueprint.errors import PathError

    found = None if force else _check(out, key)
    if found is not None:  # checked whole just now: not hashed a second time
        return found
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MANIFEST).is_file())):
        hint = "it is not ingested tables: give a new or empty directory"
        raise PathError(out, errno.EEXIST, write=True, hint=hint)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.{time.time_ns()}.tmp")
    try:
        _write(src, key, tmp, progress)
        if out.exists():
            shutil.rmtree(out)
        os.rename(tmp, out)
    except OSError as exc:
        raise PathError.from_os(exc.filename or out, exc, write=True) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _sound(out, key, hashes=False)


def _sound(target: Path, key: str, *, hashes: bool = True) -> Ingested:
    """The entry at TARGET, which must be sound.  HASHES=False right after this process wrote it:
    _write hashed every file as it lay on disk, so hashing them again would only repeat that
    (the manifest, code, names and sizes are still checked)."""
    found = _check(target, key, hashes=hashes)
    if found is None:  # written just now and unsound: a bug, never tables to trust
        raise GoblueprintError(f"the ingested tables in {target} do not match their manifest")
    return found


def _check(target: Path, key: str, *, hashes: bool = True) -> Ingested | None:
    """The entry at TARGET if its manifest names this content and code and every file is whole
    (its size and, with HASHES, its content hash as the manifest says)."""
    try:
        manifest = json.loads((target / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict):
        return None
    if (
        manifest.get("content") != key
        or manifest.get("code") != code_fingerprint()
        or manifest.get("layout") != LAYOUT
    ):
        return None
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return None
    stamps = _read_stamps(target) if hashes else {}
    unproven: list[tuple[str, Path, Any, list[int]]] = []  # to hash: (rel, path, wanted hash, stamp)
    for rel, want in files.items():
        path = target / rel
        try:
            st = path.stat()
            if st.st_size != want["bytes"]:
                return None
            if hashes and stamps.get(rel) != _stamp(st):
                unproven.append((rel, path, want["blake2b"], _stamp(st)))
        except (OSError, KeyError, TypeError):
            return None
    if unproven:
        # blake2b lets go of the GIL on large blocks: the files are hashed side by side.
        with ThreadPoolExecutor(min(len(unproven), os.cpu_count() or 1)) as pool:
            try:
                got = list(pool.map(content_hash, [path for _, path, _, _ in unproven]))
            except OSError:
                return None
        if any(h != want for h, (_, _, want, _) in zip(got, unproven, strict=True)):
            return None
        _write_stamps(target, {**stamps, **{rel: stamp for rel, _, _, stamp in unproven}})
    return Ingested(target, manifest)


# Verified stat stamps of an entry's files: a file whose size, times, inode and device are as
# when its content hash last matched is not hashed again (git's index does the same with its
# stat data). Each view's second run hashed every stored file before: ~0.8 s of the pprof
# second run's ~1.3 s on a 30 MB trace (217 MB of tables), seconds on a 300 MB one.
_STAMPS = "verified.json"
# A stamp is kept only for a file last changed this long before the stamp was taken: a change
# after it then shows in its ctime (which no one can set back), however coarse the
# filesystem's clock (git's "racily clean" entries).
_SETTLED_NS = 2_000_000_000


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _read_stamps(target: Path) -> dict[str, list[int]]:
    """The stamps of TARGET's files, none if the manifest changed since they were taken."""
    try:
        got = json.loads((target / _STAMPS).read_text())
        if got["manifest"] != _stamp((target / MANIFEST).stat()):
            return {}
        files = got["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return files if isinstance(files, dict) else {}


def _write_stamps(target: Path, stamps: dict[str, list[int]]) -> None:
    """Record the stamps of files just proven whole, those settled enough to be trusted later."""
    now = time.time_ns()
    settled = {rel: st for rel, st in stamps.items() if st[2] < now - _SETTLED_NS}
    if not settled:
        return
    tmp = target / f".{_STAMPS}.{os.getpid()}.tmp"
    try:
        manifest = _stamp((target / MANIFEST).stat())
        tmp.write_text(json.dumps({"manifest": manifest, "files": settled}, sort_keys=True))
        os.replace(tmp, target / _STAMPS)
    except OSError:  # a read-only cache: hash again next time
        tmp.unlink(missing_ok=True)


def _write(src: Path, key: str, out: Path, progress: Callable[[int], None] | None) -> None:
    # The objects alive before the pass (the modules of polars, pyarrow, numpy...) kept out of
    # the collector's way while it runs: its full collections walked them all, ~0.1 s of a
    # 30 MB trace's ingest with the GIL held, for nothing to free.
    gc.freeze()
    try:
        _write_entry(src, key, out, progress)
    finally:
        gc.unfreeze()


def _write_entry(src: Path, key: str, out: Path, progress: Callable[[int], None] | None) -> None:
    from goblueprint.timeline.stored import SQL_TABLE
    from goblueprint.timeline.tables import tables_pass
    from goblueprint.trace.reader import open_trace

    reader = open_trace(src, partial=True)
    out.mkdir(parents=True)
    tdir = out / TIMELINE_DIR
    tdir.mkdir()
    vdir = out / VIEWS_DIR
    vdir.mkdir()
    stays = vdir / f"{STAYS}.parquet"
    with reader:
        made = tables_pass(reader, progress, views=True, write_to=out, timeline_stored=True, stays_to=stays)
    tl, result, summary, profiles, utilization = made[1:6]
    heights, texts = made.written, made.texts
    del made
    files = {f"{name}.parquet": out / f"{name}.parquet" for name in heights}
    pl.DataFrame({"s": tl.strings}, schema={"s": pl.String}).write_parquet(tdir / "strings.parquet")
    files[f"{TIMELINE_DIR}/strings.parquet"] = tdir / "strings.parquet"
    files[f"{VIEWS_DIR}/{STAYS}.parquet"] = stays
    with WriteBehind(threads=2) as behind:  # frames held anyway: two written at once
        for name in _TIMELINE_FRAMES:
            if name in SQL_TABLE:  # stored as the SQL table, written by the pass
                continue
            path = tdir / f"{name}.parquet"
            behind.submit(getattr(tl, name).write_parquet, path)
            files[f"{TIMELINE_DIR}/{name}.parquet"] = path
        view_frames = {
            UTILIZATION: lambda: utilization_frame(utilization),
            **{f"summary_{name}": (lambda df=df: df) for name, df in summary_frames(summary).items()},
        }
        for name, make in view_frames.items():
            path = vdir / f"{name}.parquet"
            behind.submit(partial(make().write_parquet, path, statistics=True))
            files[f"{VIEWS_DIR}/{name}.parquet"] = path
    error = result.error
    manifest = {
        "content": key,
        "code": code_fingerprint(),
        "layout": LAYOUT,
        "trace": {"name": src.name, "bytes": src.stat().st_size},
        "go_version": result.go_version,
        "events_read": reader.events_read,
        "error": None
        if error is None
        else {"message": error.message, "offset": error.offset, "generation": error.generation, "m": error.m},
        "tables": dict(sorted(heights.items())),
        "timeline": {
            "start_ns": tl.start_ns,
            "end_ns": tl.end_ns,
            "go_version": tl.go_version,
            "texts": texts,
        },
        "profiles": {"trace_end": profiles.trace_end, "valid_events": profiles.valid_events},
        "summary": {"start_time": summary.start_time, "end_time": summary.end_time},
        "utilization": {"flags": DEFAULT_FLAGS, "series": len(utilization)},
        "files": {
            rel: {"bytes": p.stat().st_size, "blake2b": content_hash(p)} for rel, p in sorted(files.items())
        },
    }
    # Last, so a directory without it (a crash mid-way) is never taken for an entry.
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def copy_tables(found: Ingested, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Copy the SQL tables of an entry to OUT_DIR (what ``trace export --format parquet`` writes)."""
    from goblueprint.timeline.tables import write_table_files

    return write_table_files(
        out_dir,
        {
            name: (lambda dest, src=src: shutil.copyfile(src, dest))
            for name, src in found.table_files().items()
        },
    )
