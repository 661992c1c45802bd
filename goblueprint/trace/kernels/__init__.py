"""The compiled loops, loaded without numba when an ahead-of-time build exists.

The loops are written once, for numba: the reader's ``engine.py`` (ordering), ``tables.py``
(strings, stacks, CPU samples, batch headers) and ``gosort.py`` (Go's pdqsort), and the
analyses' loops over the reader's columns (``MODULES`` says where each lives).
Importing numba and starting its JIT costs about 0.8 s and 110 MB per process,
more than reading a 30 MB trace.  So the first process that needs the loops
compiles them ahead of time (``aot.py``: numba.pycc, in a child process) into
an extension module in the cache directory, keyed by the sources and the
Python, numpy and numba versions, saying so on stderr with the time it took
(processes that want it meanwhile wait for it: ``toolchain.cachelock``); every
later process imports that module, which needs numpy only.  Without a C compiler, or if the build fails, numba's
JIT runs the very same functions (the build is not retried until the sources
or versions change).  ``GOBLUEPRINT_KERNELS=jit`` forces the JIT.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import SimpleNamespace

# What callers use; every name is exported by the AOT module and found in the sources.
NAMES = {
    "engine": ("run_step", "compact_goroutines"),
    "tables": ("scan_strings", "scan_stacks", "scan_cpu_samples", "finish_stacks", "scan_batch_headers"),
    "gosort": ("sort_by_key",),
    "timeline": ("build_step", "lane_order", "group_spans", "pack_events"),
    "summary": ("summary_step",),
    "stays": ("collect_stays",),
    "util": ("utilization_rows",),
    "detail": ("merge_spans", "level_runs", "merge_tile"),
    "counters": ("fold_counter_buckets",),
    "perfetto": (
        "track_order",
        "encode_track_events",
        "window_packets",
        "dense_codes",
        "lanes_packets",
        "title_codes",
        "counter_deltas",
    ),
}
# Where each NAMES key's functions live.
MODULES = {
    "engine": "goblueprint.trace.kernels.engine",
    "tables": "goblueprint.trace.kernels.tables",
    "gosort": "goblueprint.trace.kernels.gosort",
    "timeline": "goblueprint.timeline.builder_kernel",
    "summary": "goblueprint.timeline.summary_kernel",
    "stays": "goblueprint.timeline.stay_kernel",
    "util": "goblueprint.timeline.util_kernel",
    "detail": "goblueprint.timeline.detail_kernel",
    "counters": "goblueprint.render.counters_kernel",
    "perfetto": "goblueprint.timeline.perfetto_kernel",
}
_SOURCES = ("codes.py", "engine.py", "tables.py", "gosort.py", "aot.py")
_HERE = Path(__file__).resolve().parent
# The analyses' loops and the numba-free modules of their codes (paths from the package root).
_OTHER_SOURCES = (
    "timeline/builder_kernel.py", "timeline/builder_codes.py", "timeline/_api.py",
    "timeline/summary_kernel.py", "timeline/summary_codes.py", "timeline/stay_kernel.py",
    "timeline/stay_codes.py", "timeline/util_kernel.py", "timeline/util_codes.py",
    "timeline/detail_kernel.py", "timeline/perfetto_kernel.py", "render/counters_kernel.py",
)  # fmt: skip
_PACKAGE = Path(__file__).resolve().parent.parent.parent
_loaded: SimpleNamespace | None = None


def get() -> SimpleNamespace:
    """The compiled functions (``.run_step``, ``.scan_strings``, ...); ``.mode`` is "aot" or "jit"."""
    global _loaded
    if _loaded is None:
        _loaded = _load()
    return _loaded


def module_name() -> str:
    """Name of the AOT extension module: changes whenever a source or a version does."""
    h = hashlib.sha256()
    for name in _SOURCES:
        h.update((_HERE / name).read_bytes())
    for name in _OTHER_SOURCES:
        h.update((_PACKAGE / name).read_bytes())
    for dist in ("numba", "numpy", "llvmlite"):
        h.update(f"{dist}={_version(dist)}".encode())
    h.update(sys.version.encode())
    h.update(sysconfig.get_platform().encode())
    return "gb_trace_kernels_" + h.hexdigest()[:20]


def _version(dist: str) -> str:
    """An installed distribution's version, from its dist-info directory's name.

    importlib.metadata would do, but importing it costs more (~50 ms) than every
    other step of loading the kernels; the package's own import is what we avoid.
    """
    spec = importlib.util.find_spec(dist)
    if spec is None or not spec.origin:
        return "?"
    site = Path(spec.origin).resolve().parent.parent
    found = sorted(site.glob(f"{dist}-*.dist-info"))
    return found[-1].name[len(dist) + 1 : -len(".dist-info")] if found else "?"


def aot_path() -> Path:
    from goblueprint.toolchain import cache_dir

    return cache_dir() / "kernels" / (module_name() + (importlib.machinery.EXTENSION_SUFFIXES[0]))


def _load() -> SimpleNamespace:
    if os.environ.get("GOBLUEPRINT_KERNELS", "") != "jit":
        path = aot_path()
        failed = path.with_suffix(".failed")
        if not path.exists() and not failed.exists():
            _build(path, failed)
        if path.exists():
            try:
                return _import(path)
            except ImportError:
                pass
    return _jit()


def _build(path: Path, failed: Path) -> None:
    from goblueprint.toolchain.cachelock import note, publish, write_atomic

    def compile_into(out: Path) -> None:
        env = dict(os.environ, GOBLUEPRINT_KERNELS="jit")
        # From the directory that holds this very package: `-m` puts the working directory
        # first on the path, and another goblueprint there (a checkout the user stands in, a
        # before/after comparison) would be compiled under this package's module name.
        proc = subprocess.run(
            [sys.executable, "-m", "goblueprint.trace.kernels.aot", str(out)],
            capture_output=True,
            text=True,
            env=env,
            cwd=_PACKAGE.parent,
            check=False,
        )
        if proc.returncode != 0 or not out.exists():
            # Remember the failure (the JIT serves meanwhile); the reason is kept for a look.
            write_atomic(failed, (proc.stdout + proc.stderr).encode())
            note(f"could not compile the trace reader's loops (why: {failed}); numba's JIT runs them instead")

    try:
        publish(
            path,
            compile_into,
            ready=lambda: path.exists() or failed.exists(),
            announce="compiling the trace reader's loops with numba",
            hint="1-3 minutes",
        )
    except FileNotFoundError:
        pass  # the build failed and said so in FAILED; the JIT takes over


def _import(path: Path) -> SimpleNamespace:
    name = path.name.split(".")[0]
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    if spec is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    wanted = [n for names in NAMES.values() for n in names]
    missing = [n for n in wanted if not hasattr(mod, n)]
    if missing:  # not built from these sources: the JIT serves rather than a module that lacks loops
        raise ImportError(f"{path} lacks {', '.join(missing)}")
    return SimpleNamespace(mode="aot", path=path, **{n: getattr(mod, n) for n in wanted})


def _jit() -> SimpleNamespace:
    import importlib

    fns = {n: getattr(importlib.import_module(MODULES[m]), n) for m, names in NAMES.items() for n in names}
    return SimpleNamespace(mode="jit", path=None, **fns)
