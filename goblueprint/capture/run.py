"""Build and run programs and tests under the execution tracer and schedtrace.

Why build first: with ``go run``/``go test`` the go command itself, the
compiler and the linker would inherit GODEBUG=schedtrace and mix their
scheduler lines into the program's.  So goblueprint builds the program with
the chosen toolchain and then runs the executable with GODEBUG set for it
alone.  A main package gets ``overlay/capture_*.go`` added through
``go build -overlay`` (its source tree is not touched); a test package is
traced by the testing package's own ``-test.trace`` with nothing added to it
(see ``packages.build_test``); a binary runs as it is (and writes a trace if it
honours GOBLUEPRINT_TRACE_OUT).  ``go test`` patterns that name several
packages give one capture per package, each in a subdirectory of the output.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from goblueprint import toolchain
from goblueprint.capture import packages
from goblueprint.capture.command import Plan, plan_command, split_chdir, split_flag
from goblueprint.capture.schedtrace import is_schedtrace_line, is_whole_runtime_line
from goblueprint.errors import CaptureError, GoblueprintError
from goblueprint.kernel.record import start as kernel_start

TRACE_ENV = "GOBLUEPRINT_TRACE_OUT"
GODEBUG_ORIG_ENV = "GOBLUEPRINT_GODEBUG_ORIG"
# Seconds a program gets to flush its trace after SIGTERM/SIGINT before SIGKILL.
GRACE_S = 10.0
# go test runs every test binary with this -test.timeout unless told otherwise.
GO_TEST_DEFAULT_TIMEOUT = "10m0s"
_TEST_TIMED_OUT = b"panic: test timed out after "
_SCHED_MS = re.compile(rb"^SCHED (\d+)ms:")


@dataclass
class CaptureResult:
    out_dir: Path
    meta: dict[str, Any]

    @property
    def trace(self) -> Path | None:
        name = self.meta["files"].get("trace")
        return self.out_dir / name if name else None

    @property
    def schedtrace(self) -> Path | None:
        name = self.meta["files"].get("schedtrace")
        return self.out_dir / name if name else None

    @property
    def ok(self) -> bool:
        return self.meta["error"] is None and self.meta["exit_status"] in (0, None)

    @property
    def skipped(self) -> str | None:
        """Why nothing ran (a package without test files), or None."""
        return self.meta.get("skipped")


@dataclass
class _Options:
    schedtrace_ms: int
    scheddetail: bool
    procs: int | None
    timeout: float | None
    stdout: IO[bytes] | None
    stderr: IO[bytes] | None
    no_stdin: bool
    one_package: bool = False
    kernel: bool = False
    locks: bool = False
    perf: str | None = None
    extra_overlay: dict[str, str] | None = None
    extra_env: dict[str, str] | None = None


@dataclass
class _Job:
    """One process to run: built executable, arguments, directory, how it traces."""

    command: list[str]
    kind: str
    exe: Path
    args: list[str]
    run_dir: Path
    how: str
    go_version: str | None
    goroot: Path | None
    package: str | None = None
    notes: list[str] = field(default_factory=list)


def _is_test_binary(binary: Path) -> bool:
    """A Go test binary: the generated test main runs testing.(*M).Run (after MainStart,
    which Go 1.22 inlines), which no other program links; the symbol table, or
    .gopclntab when stripped, names it."""
    from goblueprint.binary.elf import open_binary
    from goblueprint.binary.symbols import Symbols

    try:
        return "testing.(*M).Run" in {f.name for f in Symbols(open_binary(str(binary))).funcs}
    except GoblueprintError:
        return False  # not a Go ELF binary we can read: run as it is


def _binary_go_version(tc: toolchain.Toolchain | None, binary: Path) -> str | None:
    if tc is None:
        return None
    proc = tc.run(["version", str(binary)], check=False)
    match = re.search(r":\s*go(\S+)", proc.stdout)
    return match.group(1) if match and proc.returncode == 0 else None


class _TextSink:
    """Bytes in, text out: the program's stderr onto a text stream without a buffer."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, data: bytes) -> int:
        return self.stream.write(data.decode("utf-8", "replace"))

    def flush(self) -> None:
        self.stream.flush()


# Where a runtime scheduler line starts (SCHED, or scheddetail's P, M and G lines).
_RUNTIME_LINE_START = re.compile(rb"SCHED \d+ms: gomaxprocs=|  P\d+: status=|  M\d+: p=|  G\d+: status=")


@dataclass
class _StderrState:
    lines: int = 0  # scheduler lines written to the log
    # min over SCHED lines of (CLOCK_MONOTONIC at arrival - the line's own "Nms"): the
    # process's runtimeInitTime, late by at most the pipe's latency plus 1 ms of truncation.
    origin_mono_ns: int | None = None
    test_timed_out: bool = False


def _pump_stderr(
    pipe: IO[bytes], log: IO[bytes], echo: IO[bytes] | _TextSink | None, state: _StderrState
) -> None:
    """Split the program's stderr: the runtime's scheduler lines to the log, the rest on.

    A program that writes a line in pieces (a buffered writer flushing mid-line) can have a
    scheduler line land after its piece: the piece goes on without a newline (the rest of
    its line follows on a later one) and the scheduler line to the log."""
    for raw in iter(pipe.readline, b""):
        arrived = time.monotonic_ns()
        inside = _RUNTIME_LINE_START.search(raw, 1)
        if (
            inside is not None
            and not is_schedtrace_line(raw.decode("utf-8", "replace"))
            and is_whole_runtime_line(raw[inside.start() :].decode("utf-8", "replace"))
        ):
            piece, raw = raw[: inside.start()], raw[inside.start() :]
            if echo is not None:
                try:
                    echo.write(piece)
                    echo.flush()
                except (OSError, ValueError):
                    echo = None
        if is_schedtrace_line(raw.decode("utf-8", "replace")):
            if (match := _SCHED_MS.match(raw)) is not None:
                if state.lines:
                    log.flush()  # the previous sample is complete: let `tail -f` see it
                origin = arrived - int(match.group(1)) * 1_000_000
                if state.origin_mono_ns is None or origin < state.origin_mono_ns:
                    state.origin_mono_ns = origin
            log.write(raw)
            state.lines += 1
            continue
        if raw.startswith(_TEST_TIMED_OUT):
            state.test_timed_out = True
        if echo is not None:
            try:
                echo.write(raw)
                echo.flush()
            except (OSError, ValueError):
                # Our stderr went away (closed pipe): keep draining, or the program blocks.
                echo = None
    log.flush()


@contextlib.contextmanager
def _forwarding_signals(proc: subprocess.Popen[bytes], seen: list[int]) -> Iterator[None]:
    """Pass SIGINT/SIGTERM/SIGHUP sent to goblueprint on to the program while it runs.

    Dying at once would leave the program running unobserved; passed on, it
    flushes its trace (overlay handler) and exits, and what was recorded is kept.
    SIGINT (Ctrl-C) is handled here too rather than as KeyboardInterrupt: raised
    inside Popen.wait between waitpid and the recording of its status, that
    exception loses the exit status (Python then reports 0).  A second Ctrl-C
    kills the program.
    """

    def forward(signum: int, _frame: object) -> None:
        again = signum == signal.SIGINT and signal.SIGINT in seen
        seen.append(signum)
        with contextlib.suppress(OSError):
            proc.kill() if again else proc.send_signal(signum)

    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, forward)
    except ValueError:  # not the main thread: signals cannot be caught here
        pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stop(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        proc.send_signal(sig)
        proc.wait(GRACE_S)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        # No flush in time, or Ctrl-C once more: the user wants it gone.
        proc.kill()
        proc.wait()
    except OSError:
        pass


# Test flags naming files that go test resolves against its own directory (-test.outputdir).
_PROFILE_FLAGS = frozenset(
    f"test.{name}" for name in "cpuprofile memprofile blockprofile mutexprofile coverprofile".split()
)


def _test_args(plan: Plan, trace_path: Path, timeout: float | None, workdir: Path) -> list[str]:
    """The test binary's arguments as go test would pass them, plus the trace file.

    The binary runs in its package's directory, as under go test; profile files
    named relative to the directory go test ran in land there all the same
    (go test's own -test.outputdir).

    -test.timeout matters beyond mimicry: when it fires, the testing package
    stops the trace (flushing it) before it panics, so ``--timeout`` becomes the
    test binary's own timeout and the trace of a timed-out test is complete.
    """
    args = [f"-test.trace={trace_path}", "-test.paniconexit0"]
    user_timeout = None
    rest = []
    for arg in plan.program_args:
        key, value = split_flag(arg)
        if key == "test.timeout" and value is not None and user_timeout is None:
            user_timeout = value
        else:
            rest.append(arg)
    chosen = user_timeout if user_timeout is not None else GO_TEST_DEFAULT_TIMEOUT
    if timeout is not None and (user_timeout is None or _go_duration_s(user_timeout) > timeout):
        chosen = f"{timeout}s"
    keys = {split_flag(arg)[0] for arg in rest}
    if keys & _PROFILE_FLAGS and "test.outputdir" not in keys:
        args.append(f"-test.outputdir={workdir.resolve()}")
    return [*args, f"-test.timeout={chosen}", *rest]


def _go_duration_s(text: str) -> float:
    """Seconds of a Go duration such as 1m30s or 500ms (0 for "0": no timeout, so infinite)."""
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    parts = re.findall(r"([0-9.]+)(ns|us|µs|ms|s|m|h)", text)
    if not parts:
        if text.strip() in ("0", ""):
            return float("inf")
        raise CaptureError(f"-timeout {text}: not a duration")
    total = sum(float(n) * units[u] for n, u in parts)
    return total if total > 0 else float("inf")


def _sub_dir(import_path: str) -> str:
    return import_path.replace("/", "_")


def _jobs(
    plan: Plan, tc: toolchain.Toolchain | None, out_dir: Path, workdir: Path, opts: _Options
) -> Iterator[_Job | CaptureResult]:
    """Build what PLAN names, one job at a time (a package without tests yields a result)."""
    if any(split_flag(f)[0] == "overlay" for f in plan.build_flags):
        raise CaptureError("-overlay is used by capture itself and cannot be given too")
    if plan.kind == "binary":
        assert plan.binary is not None  # set by plan_command for binaries
        args, how = list(plan.program_args), "env"
        if _is_test_binary(plan.binary) and not any(split_flag(a)[0] == "test.trace" for a in args):
            # A test binary (go test -c) records itself given -test.trace, as under go test.
            args, how = _test_args(plan, out_dir / "trace.out", opts.timeout, workdir), "test-flag"
        yield _Job(plan.command, "binary", plan.binary, args, workdir, how,
                   _binary_go_version(tc, plan.binary), None)  # fmt: skip
        return
    assert tc is not None  # found by capture_all for every kind but binaries
    build_dir, target = workdir, plan
    if plan.kind == "package" and (workdir / plan.target[0]).is_dir():
        # A directory may be a module of its own, outside the current one: load it from inside.
        build_dir = (workdir / plan.target[0]).resolve()
        target = Plan(plan.kind, plan.command, plan.build_flags, ["."], plan.program_args)
    pkgs = packages.resolve(tc, target, build_dir)
    if plan.kind != "test":
        if len(pkgs) != 1:
            raise CaptureError(f"{' '.join(plan.target)} names {len(pkgs)} packages; go run takes one")
        pkg = pkgs[0]
        if pkg.name != "main":
            raise CaptureError(f"{' '.join(plan.target)} is package {pkg.name}, not a main package")
        start = time.monotonic()
        exe = out_dir / "program"
        how = packages.build_main(tc, pkg, plan.build_flags, exe, build_dir, opts.extra_overlay)
        job = _Job(plan.command, plan.kind, exe, list(plan.program_args), workdir, how, tc.version, tc.goroot,
                   pkg.import_path)  # fmt: skip
        if how == "program":
            job.notes.append("the program calls trace.Start itself: built without the overlay")
        job.notes.append(f"built in {time.monotonic() - start:.1f}s")
        yield job
        return
    several = len(pkgs) > 1
    if several and opts.one_package:
        # (lab observe and capture() record one package; the capture command, capture_all, several)
        names = ", ".join(p.import_path for p in pkgs[:3]) + (", …" if len(pkgs) > 3 else "")
        raise CaptureError(f"{' '.join(plan.target)} names {len(pkgs)} packages ({names}): give one")
    if several:
        names = [_sub_dir(p.import_path) for p in pkgs]
        if len(set(names)) != len(names):
            raise CaptureError("two packages map to the same output folder name; capture them one at a time")
    for pkg in pkgs:
        pkg_out = out_dir / _sub_dir(pkg.import_path) if several else out_dir
        if pkg.test_files == 0:
            meta = {"command": plan.command, "package": pkg.import_path, "skipped": "no test files", "error": None,
                    "exit_status": None, "files": {}}  # fmt: skip
            yield CaptureResult(pkg_out, meta)
            continue
        pkg_out.mkdir(parents=True, exist_ok=True)
        exe = pkg_out / "program.test"
        start = time.monotonic()
        try:
            packages.build_test(tc, pkg, plan.build_flags, exe, build_dir, opts.extra_overlay)
        except CaptureError as exc:
            if not several:
                raise
            # As go test: FAIL pkg [build failed], and on with the other packages.
            meta = {"command": plan.command, "package": pkg.import_path, "skipped": "build failed",
                    "error": str(exc), "exit_status": None, "files": {}}  # fmt: skip
            yield CaptureResult(pkg_out, meta)
            continue
        args = _test_args(plan, pkg_out / "trace.out", opts.timeout, workdir)
        job = _Job(
            plan.command, "test", exe, args, pkg.dir, "test-flag", tc.version, tc.goroot, pkg.import_path
        )
        job.notes.append(f"built in {time.monotonic() - start:.1f}s")
        yield job


def _environment(job: _Job, trace_path: Path, opts: _Options) -> dict[str, str]:
    env = dict(os.environ)
    orig_godebug = env.get("GODEBUG", "")
    debug = [orig_godebug] if orig_godebug else []
    if opts.schedtrace_ms:
        debug.append(f"schedtrace={opts.schedtrace_ms}")
        if opts.scheddetail:
            debug.append("scheddetail=1")
    if debug:
        env["GODEBUG"] = ",".join(debug)
    env[GODEBUG_ORIG_ENV] = orig_godebug
    if job.kind == "test":
        # As go test runs a test binary: its toolchain's bin first on PATH, PWD set.
        assert job.goroot is not None
        env["PATH"] = f"{job.goroot / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["PWD"] = str(job.run_dir)
    else:
        env[TRACE_ENV] = str(trace_path)
    if opts.procs is not None:
        env["GOMAXPROCS"] = str(opts.procs)
    env.update(opts.extra_env or {})
    return env


def _run_job(job: _Job, out_dir: Path, opts: _Options) -> CaptureResult:
    """Run one built job into OUT_DIR; a failure of the program is recorded, not raised."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in ("trace.out", "schedtrace.log", "meta.json"):
        (out_dir / stale).unlink(missing_ok=True)
    trace_path = out_dir / "trace.out"
    env = _environment(job, trace_path, opts)
    echo_err = opts.stderr if opts.stderr is not None else getattr(sys.stderr, "buffer", None)
    if echo_err is None:  # a text-only stderr (some embedding): pass the bytes on decoded
        echo_err = _TextSink(sys.stderr)
    notes = list(job.notes)
    started = _dt.datetime.now(_dt.UTC)
    t0 = time.monotonic()
    timed_out = interrupted = False
    state = _StderrState()
    log_path = out_dir / "schedtrace.log"
    # A test binary stops itself at -test.timeout (flushing its trace); the wait here is a backstop.
    wait = opts.timeout if job.how != "test-flag" or opts.timeout is None else opts.timeout + GRACE_S
    # --kernel: the program runs under perf record (goblueprint.kernel.record), or as it is if perf cannot.
    argv = [str(job.exe), *job.args]
    kernel_rec = (
        kernel_start(out_dir, argv, locks=opts.locks, perf_binary=opts.perf, notes=notes)
        if opts.kernel
        else None
    )
    if kernel_rec is not None:
        argv = kernel_rec.argv
    with open(log_path, "wb") as log:
        try:
            stdin = subprocess.DEVNULL if opts.no_stdin else None
            proc = subprocess.Popen(argv, cwd=job.run_dir, env=env, stdin=stdin,
                                    stdout=opts.stdout, stderr=subprocess.PIPE)  # fmt: skip
        except OSError as exc:
            raise CaptureError(f"cannot run {job.exe}: {exc}") from exc
        assert proc.stderr is not None  # stderr=PIPE
        pump = threading.Thread(target=_pump_stderr, args=(proc.stderr, log, echo_err, state), daemon=True)
        pump.start()
        forwarded: list[int] = []
        with _forwarding_signals(proc, forwarded):
            try:
                proc.wait(wait)
            except subprocess.TimeoutExpired:
                timed_out = True
                # SIGTERM first: the overlay flushes the trace on it.
                _stop(proc, signal.SIGTERM)
            except KeyboardInterrupt:
                # SIGINT came while the handler above was not installed (not the main thread).
                interrupted = True
                _stop(proc, signal.SIGINT)
        pump.join()
        # Ctrl-C reached the program too (same process group) and once more from the handler,
        # for a program started without a terminal; the summary follows as after any run.
        interrupted = interrupted or signal.SIGINT in forwarded
        passed_on = [sig for sig in forwarded if sig != signal.SIGINT]
        if passed_on:
            notes.append(
                f"goblueprint got {signal.Signals(passed_on[0]).name} and passed it on to the program"
            )
    wall = time.monotonic() - t0
    rc = proc.returncode
    kernel_meta = kernel_rec.finish() if kernel_rec is not None else None
    if state.test_timed_out:
        timed_out = True

    error: str | None = None
    if timed_out:
        error = (
            f"timed out after {opts.timeout}s and was stopped"
            if opts.timeout
            else "the test binary timed out"
        )
    elif interrupted:
        error = "interrupted"
    elif rc is not None and rc < 0:
        error = f"killed by signal {signal.Signals(-rc).name}"
    elif rc:
        error = f"exited with status {rc}"
    if job.how == "test-flag" and rc is not None and rc < 0:
        notes.append(
            "the testing package flushes its trace only when the tests return or -test.timeout fires: "
            "stopped by a signal, the trace keeps the generations flushed before it (up to about a second is "
            "lost); --timeout stops a test with a complete trace"
        )
    have_trace = trace_path.exists() and trace_path.stat().st_size > 0
    if not have_trace:
        trace_path.unlink(missing_ok=True)
        why = ""
        if job.how == "env":
            why = f" (a binary must honour {TRACE_ENV} or call trace.Start itself)"
        elif any(split_flag(a)[0] == "test.list" for a in job.args):
            # testing's M.Run lists and returns before it starts the trace (m.before).
            why = " (with -list the testing package lists the tests, runs none and starts no trace)"
        missing = "no trace was written" + why
        error = f"{error}; {missing}" if error else missing
    if not opts.schedtrace_ms:
        log_path.unlink()

    gomaxprocs: int | None = opts.procs
    gomaxprocs_source = "--procs" if opts.procs is not None else None
    if state.lines:
        from goblueprint.capture.schedtrace import parse

        try:
            first = parse(log_path.read_text(errors="replace"), lenient=True).samples
            if first:
                gomaxprocs, gomaxprocs_source = first[0].counters.get("gomaxprocs"), "schedtrace"
        except GoblueprintError as exc:
            notes.append(f"schedtrace.log could not be read: {exc}")
    if gomaxprocs is None:
        gomaxprocs, gomaxprocs_source = os.cpu_count(), "cpu count"

    meta: dict[str, Any] = {
        "command": list(job.command),
        "package": job.package,
        "kind": job.kind,
        "trace_via": job.how,
        "go_version": job.go_version,
        "goroot": str(job.goroot) if job.goroot is not None else None,
        "gomaxprocs": gomaxprocs,
        "gomaxprocs_source": gomaxprocs_source,
        "procs": opts.procs,
        "schedtrace_ms": opts.schedtrace_ms or None,
        "scheddetail": bool(opts.scheddetail and opts.schedtrace_ms),
        # CLOCK_MONOTONIC (ns) of the runtime's start, from schedtrace's arrival times:
        # schedtrace's "0ms" on the trace's clock (see crosscheck.clock_origin).
        "process_start_mono_ns": state.origin_mono_ns,
        "host": {
            "hostname": socket.gethostname(),
            "os": platform.system().lower(),
            "arch": platform.machine(),
            "cpus": os.cpu_count(),
        },
        "started_utc": started.isoformat(timespec="seconds"),
        "wall_s": round(wall, 3),
        "exit_status": rc if rc is not None and rc >= 0 else None,
        "signal": signal.Signals(-rc).name if rc is not None and rc < 0 else None,
        "timed_out": timed_out,
        "interrupted": interrupted,
        "error": error,
        "files": {
            "trace": "trace.out" if have_trace else None,
            "schedtrace": "schedtrace.log" if opts.schedtrace_ms else None,
            "binary": job.exe.name if job.kind != "binary" else None,
        },
        "schedtrace_lines": state.lines,
        "trace_bytes": trace_path.stat().st_size if have_trace else 0,
        "notes": notes,
    }
    if opts.kernel:
        meta["kernel"] = kernel_meta
    (out_dir / "meta.json").write_text(json.dumps(meta, sort_keys=True, indent=2) + "\n")
    return CaptureResult(out_dir, meta)


def capture_all(
    command: list[str],
    out_dir: Path,
    *,
    schedtrace_ms: int = 100,
    scheddetail: bool = False,
    procs: int | None = None,
    go: str | None = None,
    timeout: float | None = None,
    stdout: IO[bytes] | None = None,
    stderr: IO[bytes] | None = None,
    no_stdin: bool = False,
    cwd: Path | None = None,
    on_result: Callable[[CaptureResult], None] | None = None,
    one_package: bool = False,
    kernel: bool = False,
    locks: bool = False,
    perf: str | None = None,
    extra_overlay: dict[str, str] | None = None,
    extra_env: dict[str, str] | None = None,
) -> list[CaptureResult]:
    """Record COMMAND into OUT_DIR: one result per package (trace.out, schedtrace.log, meta.json).

    A ``go test`` pattern naming several packages records each into
    ``OUT_DIR/<import path with / as _>/``; one package records into OUT_DIR.
    Build and usage problems raise CaptureError.  Once a program ran, its
    failure (non-zero exit, signal, timeout, no trace) does not raise: it is
    recorded in meta.json (``error``, ``exit_status``) so that what was
    recorded is kept; ``CaptureResult.ok`` tells.  Ctrl-C ends the current
    package like that (``"interrupted"``) and skips the rest.  ``one_package``
    refuses, before building anything, a pattern that names several.
    ``kernel`` also records the kernel scheduler with perf (``locks``: futex and
    lock events too; ``perf``: the perf binary), see goblueprint.kernel.record.
    ``extra_overlay`` joins the build's overlay and ``extra_env`` the program's
    environment (both for `goblueprint lab`).
    """
    workdir = Path(cwd) if cwd is not None else Path.cwd()
    to_run, workdir = split_chdir(command, workdir)
    plan = plan_command(to_run, workdir)
    plan.command = list(command)  # as the user gave it, -C too
    if schedtrace_ms < 0:
        raise CaptureError("--schedtrace must be 0 (off) or a period in milliseconds")
    if procs is not None and procs < 1:
        raise CaptureError("--procs must be at least 1")
    if timeout is not None and timeout <= 0:
        raise CaptureError("--timeout must be positive")
    opts = _Options(
        schedtrace_ms, scheddetail, procs, timeout, stdout, stderr, no_stdin, one_package, kernel, locks, perf,
        extra_overlay, extra_env,
    )  # fmt: skip
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    tc: toolchain.Toolchain | None
    try:
        tc = toolchain.find(go)
    except GoblueprintError:
        if plan.kind != "binary" or go is not None:
            raise
        tc = None
    results: list[CaptureResult] = []
    for job in _jobs(plan, tc, out_dir, workdir, opts):
        result = (
            job
            if isinstance(job, CaptureResult)
            else _run_job(job, job.exe.parent if job.kind == "test" else out_dir, opts)
        )
        results.append(result)
        if on_result is not None:
            on_result(result)
        if result.meta.get("interrupted"):
            break
    return results


def capture(command: list[str], out_dir: Path, **options: Any) -> CaptureResult:
    """Record COMMAND, which must name one package (or a binary), into OUT_DIR."""
    return capture_all(command, out_dir, one_package=True, **options)[0]
