"""The compiled loops: the ahead-of-time module and numba's JIT are the same functions.

Each check runs in a child process, so the module cache of this one (which holds
whichever build it loaded first) does not decide the outcome.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from goblueprint.trace import kernels


def _py(code: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, **(env or {})),
        check=False,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _dump(trace: Path, mode: str | None) -> str:
    env = {"GOBLUEPRINT_KERNELS": mode or ""}  # "": the AOT module, whatever this run uses
    code = f"""
import sys
from goblueprint.trace import kernels
from goblueprint.trace.reader import open_trace
out = [ev.string() for ev in open_trace({str(trace)!r})]
print(kernels.get().mode, "numba" in sys.modules, len(out))
sys.stdout.write("".join(out))
"""
    return _py(code, env)


@pytest.mark.slow
def test_aot_and_jit_read_the_same_events(go_trace):
    trace = go_trace("sched", go="1.27")
    aot = _dump(trace, None)
    jit = _dump(trace, "jit")
    head_aot, _, body_aot = aot.partition("\n")
    head_jit, _, body_jit = jit.partition("\n")
    mode, numba_loaded, n = head_aot.split()
    assert kernels.aot_path().exists(), "the ahead-of-time build failed on a machine with a C compiler"
    assert (mode, numba_loaded) == ("aot", "False"), "reading with the AOT module must not import numba"
    assert head_jit.split()[:2] == ["jit", "True"]
    assert int(n) > 10_000
    assert body_aot == body_jit


def test_failed_build_falls_back_to_jit(tmp_path):
    # A remembered failure is not retried: the JIT serves, with the same functions.
    code = """
from goblueprint.trace import kernels
p = kernels.aot_path()
p.parent.mkdir(parents=True, exist_ok=True)
p.with_suffix(".failed").write_text("no compiler")
k = kernels.get()
print(k.mode, sorted(n for names in kernels.NAMES.values() for n in names if callable(getattr(k, n))))
"""
    out = _py(code, {"GOBLUEPRINT_CACHE": str(tmp_path)})
    mode, _, names = out.partition(" ")
    assert mode == "jit"
    assert "run_step" in names and "scan_strings" in names


def test_module_name_follows_the_sources(tmp_path, monkeypatch):
    # The key covers every kernel source: an edit can never load a stale build.
    import shutil

    here = Path(kernels.__file__).parent
    copy = tmp_path / "kernels"
    shutil.copytree(here, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(kernels, "_HERE", copy)
    name = kernels.module_name()
    assert name.startswith("gb_trace_kernels_") and name.isidentifier()
    for src in ("codes.py", "engine.py", "tables.py", "gosort.py", "aot.py"):
        path = copy / src
        original = path.read_bytes()
        path.write_bytes(original + b"\n")
        assert kernels.module_name() != name, src
        path.write_bytes(original)
    assert kernels.module_name() == name


def _analyse(trace: Path, out: Path, mode: str | None) -> str:
    """pprof, metrics (its own pass: --mmu-flags) and ingest in one child; its kernels' mode, whether
    numba got imported, the loops the JIT compiled, then the profile's and the metrics' bytes."""
    env = {"GOBLUEPRINT_KERNELS": mode or ""}  # "": the AOT module, whatever this run uses
    code = f"""
import contextlib, hashlib, io, sys
from goblueprint.cli import main
from goblueprint.trace import kernels
trace, out = {str(trace)!r}, {str(out)!r}
metrics = io.StringIO()
with contextlib.redirect_stdout(metrics):
    assert main(["trace", "metrics", "--mmu-flags", "stw", trace]) == 0
with contextlib.redirect_stdout(io.StringIO()):  # these name their output paths
    assert main(["trace", "pprof", "--type", "sync", "-o", out + "/sync.pb.gz", trace]) == 0
    assert main(["trace", "ingest", "--force", "-o", out + "/ingest", trace]) == 0
k = kernels.get()
ran = [n for n in ("summary_step", "collect_stays", "utilization_rows") if getattr(getattr(k, n), "signatures", None)]
print(k.mode, "numba" in sys.modules, ",".join(ran) or "-")
print(hashlib.sha256(open(out + "/sync.pb.gz", "rb").read()).hexdigest())
print(hashlib.sha256(metrics.getvalue().encode()).hexdigest())
"""
    return _py(code, env)


@pytest.mark.slow
def test_analyses_with_the_aot_module_do_not_import_numba(go_trace, tmp_path):
    # The summary, stays and utilization loops are in the AOT module too: a process making a
    # profile, metrics or an ingest loads them without numba, and they give the JIT's results.
    trace = go_trace("sched", go="1.27")
    (tmp_path / "aot").mkdir()
    (tmp_path / "jit").mkdir()
    aot = _analyse(trace, tmp_path / "aot", None).splitlines()
    jit = _analyse(trace, tmp_path / "jit", "jit").splitlines()
    assert kernels.aot_path().exists(), "the ahead-of-time build failed on a machine with a C compiler"
    assert aot[0] == "aot False -", "the analyses with the AOT module must not import numba"
    # The JIT run shows the three commands do call the three loops.
    assert jit[0] == "jit True summary_step,collect_stays,utilization_rows"
    assert aot[1:] == jit[1:]


def test_module_name_follows_the_analyses_sources(tmp_path, monkeypatch):
    # The analyses' loops and their numba-free codes are compiled in too: an edit of any rebuilds.
    import shutil

    for src in kernels._OTHER_SOURCES:
        (tmp_path / src).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(kernels._PACKAGE / src, tmp_path / src)
    monkeypatch.setattr(kernels, "_PACKAGE", tmp_path)
    name = kernels.module_name()
    for module in kernels.MODULES.values():
        if not module.startswith("goblueprint.trace.kernels."):
            path = module.removeprefix("goblueprint.").replace(".", "/") + ".py"
            assert path in kernels._OTHER_SOURCES, module
    for src in kernels._OTHER_SOURCES:
        path = tmp_path / src
        original = path.read_bytes()
        path.write_bytes(original + b"\n")
        assert kernels.module_name() != name, src
        path.write_bytes(original)
    assert kernels.module_name() == name


def test_the_build_compiles_this_package_whatever_the_working_directory(tmp_path, monkeypatch):
    # A child started with `-m` imports from its working directory first: standing in another
    # checkout (or comparing two), its loops must not be compiled under this package's name.
    import goblueprint

    other = tmp_path / "elsewhere"
    (other / "goblueprint").mkdir(parents=True)
    (other / "goblueprint" / "__init__.py").write_text("")
    monkeypatch.chdir(other)
    monkeypatch.setenv("GOBLUEPRINT_CACHE", str(tmp_path / "cache"))
    calls: list[dict] = []
    real_run = subprocess.run

    def run(cmd, **kw):  # type: ignore[no-untyped-def]
        calls.append(kw)
        return subprocess.CompletedProcess(cmd, 1, "", "not built in this test")

    monkeypatch.setattr(kernels.subprocess, "run", run)
    path = kernels.aot_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    kernels._build(path, path.with_suffix(".failed"))
    assert len(calls) == 1
    probe = real_run(
        [sys.executable, "-c", "import goblueprint; print(goblueprint.__file__)"],
        cwd=calls[0].get("cwd"),
        env=calls[0]["env"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(probe.stdout.strip()) == Path(goblueprint.__file__)


def test_aot_loops_release_the_gil():
    """A loop declared nogil=True runs in the AOT module while another thread runs Python (the
    Perfetto export encodes on worker threads).  With a switch interval longer than the test,
    the GIL changes hands only when someone gives it up: the main thread, back from its sleep,
    runs before the loops end only if they gave it up."""
    code = """
import sys, threading, time
import numpy as np
from goblueprint.trace import kernels
k = kernels.get()
keys = np.arange(1 << 20, dtype=np.int64)
k.dense_codes(keys)
sys.setswitchinterval(1000.0)
done = []
def work():
    for _ in range(40):
        k.dense_codes(keys)
    done.append(True)
t = threading.Thread(target=work)
t.start()
time.sleep(0.05)
print(k.mode, "ended" if done else "running")
t.join()
"""
    assert _py(code).split() == ["aot", "running"]
