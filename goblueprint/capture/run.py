"""Build and run one program under the execution tracer and schedtrace.

Why build first: with ``go run``/``go test`` the go command itself, the
compiler and the linker would inherit GODEBUG=schedtrace and mix their
scheduler lines into the program's.  So goblueprint builds the program with
the chosen toolchain and then runs the executable with GODEBUG set for it
alone.  A main package gets ``overlay/capture_*.go`` added through
``go build -overlay`` (its source tree is not touched); a test package is
traced by the testing package's own ``-test.trace``; a binary runs as it is
(and writes a trace if it honours GOBLUEPRINT_TRACE_OUT).
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
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from goblueprint import toolchain
from goblueprint.capture.command import Plan, plan_command
from goblueprint.capture.schedtrace import is_schedtrace_line
from goblueprint.errors import CaptureError, GoblueprintError

OVERLAY_DIR = Path(__file__).parent / "overlay"
# Names the added files take inside the program's package directory; "0000"
# sorts first, so their variable initialisers run before the program's.
OVERLAY_FILES = {
    "0000_goblueprint_capture_common.go": "capture_common.go",
    "0000_goblueprint_capture_exithook_go121.go": "capture_exithook_go121.go",
    "0000_goblueprint_capture_exithook_go123.go": "capture_exithook_go123.go",
}


def overlay_files(tc: toolchain.Toolchain) -> dict[str, str]:
    """The added files for this release: the common one and the exit-hook variant.

    The variants carry build constraints too, but go ignores those for files
    named on the command line (`go run a.go b.go`), so the choice is made here.
    """
    variant = "go123" if tc.minor >= (1, 23) else "go121"
    return {
        added: ours for added, ours in OVERLAY_FILES.items() if "exithook" not in added or variant in added
    }


# The template added to a package under test (package clause filled in).
TEST_OVERLAY_TEMPLATE = "capture_testpkg.go.txt"
TEST_OVERLAY_FILE = "0000_goblueprint_capture_testhook.go"
TRACE_ENV = "GOBLUEPRINT_TRACE_OUT"
GODEBUG_ORIG_ENV = "GOBLUEPRINT_GODEBUG_ORIG"
# Seconds a program gets to flush its trace after SIGTERM/SIGINT before SIGKILL.
GRACE_S = 10.0


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
        return self.meta["error"] is None and self.meta["exit_status"] == 0


def _go_list(
    tc: toolchain.Toolchain, target: list[str], build_flags: list[str], workdir: Path
) -> tuple[Path, str, list[str]]:
    tags = [f for f in build_flags if f.lstrip("-").split("=")[0] in ("tags", "mod", "modfile")]
    proc = tc.run(
        ["list", *tags, "-f", '{{.Dir}}\t{{.Name}}\t{{join .GoFiles " "}}', "--", *target],
        cwd=str(workdir),
        check=False,
    )
    if proc.returncode != 0:
        raise CaptureError(f"cannot load {' '.join(target)}: {_first_lines(proc.stderr or proc.stdout)}")
    lines = proc.stdout.strip().splitlines()
    if len(lines) != 1:
        raise CaptureError(f"{' '.join(target)} names {len(lines)} packages; name one")
    directory, name, files = lines[0].split("\t")
    return Path(directory), name, files.split()


def _first_lines(text: str, n: int = 6) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "; ".join(lines[:n]) if lines else "no output"


def _calls_trace_start(directory: Path, files: list[str]) -> bool:
    for name in files:
        try:
            if "trace.Start(" in (directory / name).read_text(errors="replace"):
                return True
        except OSError:
            continue
    return False


def _with_checklinkname(build_flags: list[str], tc: toolchain.Toolchain) -> list[str]:
    """Go 1.23+ links pull-only linknames into the runtime only with -checklinkname=0."""
    if tc.minor < (1, 23):
        return build_flags
    out = []
    merged = False
    i = 0
    while i < len(build_flags):
        flag = build_flags[i]
        key = flag.lstrip("-").split("=")[0]
        if key == "ldflags":
            if "=" in flag:
                value = flag.split("=", 1)[1]
                i += 1
            else:
                value = build_flags[i + 1]
                i += 2
            out.append(f"-ldflags={value} -checklinkname=0")
            merged = True
            continue
        out.append(flag)
        i += 1
    if not merged:
        out.append("-ldflags=-checklinkname=0")
    return out


def _build(
    plan: Plan,
    tc: toolchain.Toolchain,
    out_dir: Path,
    workdir: Path,
    notes: list[str],
    extra_overlay: dict[str, str] | None = None,
) -> tuple[Path, Path, str]:
    """Build the program; returns (executable, working directory, how the trace is taken).

    EXTRA_OVERLAY (file replaced -> replacement) joins the overlay: `goblueprint lab`
    passes an instrumented copy of runtime files this way.
    """
    extra = dict(extra_overlay or {})
    if any(f.lstrip("-").split("=")[0] == "overlay" for f in plan.build_flags):
        raise CaptureError("-overlay is used by capture itself and cannot be given too")
    run_dir = workdir
    build_dir = workdir
    target = list(plan.target)
    if plan.kind == "package" and (workdir / target[0]).is_dir():
        # A directory may be a module of its own, outside the current one: build it from inside.
        build_dir, target = (workdir / target[0]).resolve(), ["."]
    directory, name, files = _go_list(tc, target, plan.build_flags, build_dir)
    if plan.kind == "test":
        exe = out_dir / "program.test"
        exe.unlink(missing_ok=True)
        with tempfile.TemporaryDirectory(prefix="goblueprint-overlay-") as tmp:
            flags = list(plan.build_flags)
            replace = dict(extra)
            # A package with non-test files gets the test hook (GODEBUG restored for child
            # processes, clock anchor); a directory of external _test files alone does not.
            if files and not name.endswith("_test"):
                hook = Path(tmp) / "hook.go"
                template = (OVERLAY_DIR / TEST_OVERLAY_TEMPLATE).read_text()
                hook.write_text(template.replace("GOBLUEPRINT_PACKAGE", name))
                replace[str(directory / TEST_OVERLAY_FILE)] = str(hook)
            else:
                notes.append("test package without non-test files: no GODEBUG restore, no clock anchor")
            if replace:
                overlay = Path(tmp) / "overlay.json"
                overlay.write_text(json.dumps({"Replace": replace}, sort_keys=True))
                flags.append(f"-overlay={overlay}")
            proc = tc.run(
                ["test", "-c", "-o", str(exe), *flags, "--", *target], cwd=str(build_dir), check=False
            )
        if proc.returncode != 0:
            raise CaptureError(f"go test -c failed: {_first_lines(proc.stderr or proc.stdout)}")
        if not exe.exists():
            raise CaptureError(f"{' '.join(plan.target)} has no test files")
        return exe, directory, "test-flag"
    if name != "main":
        raise CaptureError(f"{' '.join(plan.target)} is package {name}, not a main package")
    exe = out_dir / "program"
    exe.unlink(missing_ok=True)
    flags = list(plan.build_flags)
    how = "overlay"
    with tempfile.TemporaryDirectory(prefix="goblueprint-overlay-") as tmp:
        if _calls_trace_start(directory, files):
            how = "program"
            notes.append("the program calls trace.Start itself: built without the overlay")
            if extra:
                overlay = Path(tmp) / "overlay.json"
                overlay.write_text(json.dumps({"Replace": extra}, sort_keys=True))
                flags.append(f"-overlay={overlay}")
        else:
            replace = {
                str(directory / added): str(OVERLAY_DIR / ours) for added, ours in overlay_files(tc).items()
            }
            replace.update(extra)
            overlay = Path(tmp) / "overlay.json"
            overlay.write_text(json.dumps({"Replace": replace}, sort_keys=True))
            flags = _with_checklinkname([*flags, f"-overlay={overlay}"], tc)
            if target[0].endswith(".go"):
                # Packages given as files take only the files listed, all named the same way
                # (go refuses "." next to an absolute directory).
                target = [str((build_dir / f).resolve()) for f in target]
                target.extend(str(directory / added) for added in overlay_files(tc))
        proc = tc.run(["build", "-o", str(exe), *flags, "--", *target], cwd=str(build_dir), check=False)
    if proc.returncode != 0:
        raise CaptureError(f"go build failed: {_first_lines(proc.stderr or proc.stdout)}")
    return exe, run_dir, how


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


def _pump_stderr(
    pipe: IO[bytes], log: IO[bytes], echo: IO[bytes] | _TextSink | None, counts: list[int]
) -> None:
    """Split the program's stderr: the runtime's scheduler lines to the log, the rest on."""
    for raw in iter(pipe.readline, b""):
        if is_schedtrace_line(raw.decode("utf-8", "replace")):
            if raw.startswith(b"SCHED ") and counts[0]:
                log.flush()  # the previous sample is complete: let `tail -f` see it
            log.write(raw)
            counts[0] += 1
        elif echo is not None:
            try:
                echo.write(raw)
                echo.flush()
            except (OSError, ValueError):
                # Our stderr went away (closed pipe): keep draining, or the program blocks.
                echo = None
    log.flush()


@contextlib.contextmanager
def _forwarding_signals(proc: subprocess.Popen[bytes], seen: list[int]) -> Iterator[None]:
    """Pass SIGTERM/SIGHUP sent to goblueprint on to the program while it runs.

    Dying at once would leave the program running unobserved; passed on, it
    flushes its trace (overlay handler) and exits, and what was recorded is kept.
    """

    def forward(signum: int, _frame: object) -> None:
        seen.append(signum)
        with contextlib.suppress(OSError):
            proc.send_signal(signum)

    previous = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
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
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except OSError:
        pass


def capture(
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
    extra_overlay: dict[str, str] | None = None,
    extra_env: dict[str, str] | None = None,
) -> CaptureResult:
    """Record COMMAND into OUT_DIR (trace.out, schedtrace.log, meta.json).

    Build and usage problems raise CaptureError before anything runs.  Once the
    program ran, a failure (non-zero exit, signal, timeout, no trace) does not
    raise: it is recorded in meta.json (``error``, ``exit_status``) so that what
    was recorded is kept; ``CaptureResult.ok`` tells.  EXTRA_OVERLAY joins the build's
    overlay and EXTRA_ENV the program's environment (both for `goblueprint lab`).
    """
    workdir = Path(cwd) if cwd is not None else Path.cwd()
    plan = plan_command(command, workdir)
    if schedtrace_ms < 0:
        raise CaptureError("--schedtrace must be 0 (off) or a period in milliseconds")
    if procs is not None and procs < 1:
        raise CaptureError("--procs must be at least 1")
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in ("trace.out", "schedtrace.log", "meta.json"):
        (out_dir / stale).unlink(missing_ok=True)
    notes: list[str] = []
    tc: toolchain.Toolchain | None
    try:
        tc = toolchain.find(go)
    except GoblueprintError:
        if plan.kind != "binary" or go is not None:
            raise
        tc = None

    trace_path = out_dir / "trace.out"
    if plan.kind == "binary":
        assert plan.binary is not None  # set by plan_command for binaries
        exe, run_dir, how = plan.binary, workdir, "env"
        go_version = _binary_go_version(tc, exe)
    else:
        assert tc is not None
        build_start = time.monotonic()
        exe, run_dir, how = _build(plan, tc, out_dir, workdir, notes, extra_overlay)
        notes.append(f"built in {time.monotonic() - build_start:.1f}s")
        go_version = tc.version

    args = list(plan.program_args)
    if how == "test-flag":
        args.insert(0, f"-test.trace={trace_path}")
    env = dict(os.environ)
    orig_godebug = env.get("GODEBUG", "")
    debug = [orig_godebug] if orig_godebug else []
    if schedtrace_ms:
        debug.append(f"schedtrace={schedtrace_ms}")
        if scheddetail:
            debug.append("scheddetail=1")
    if debug:
        env["GODEBUG"] = ",".join(debug)
    env[GODEBUG_ORIG_ENV] = orig_godebug
    env[TRACE_ENV] = str(trace_path)
    env.update(extra_env or {})
    if procs is not None:
        env["GOMAXPROCS"] = str(procs)

    echo_err = stderr if stderr is not None else getattr(sys.stderr, "buffer", None)
    if echo_err is None:  # a text-only stderr (some embedding): pass the bytes on decoded
        echo_err = _TextSink(sys.stderr)
    started = _dt.datetime.now(_dt.UTC)
    t0 = time.monotonic()
    error: str | None = None
    timed_out = False
    interrupted = False
    sched_lines = [0]
    log_path = out_dir / "schedtrace.log"
    with open(log_path, "wb") as log:
        try:
            stdin = subprocess.DEVNULL if no_stdin else None
            proc = subprocess.Popen(
                [str(exe), *args], cwd=run_dir, env=env, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE
            )
        except OSError as exc:
            raise CaptureError(f"cannot run {exe}: {exc}") from exc
        assert proc.stderr is not None  # stderr=PIPE
        pump = threading.Thread(
            target=_pump_stderr, args=(proc.stderr, log, echo_err, sched_lines), daemon=True
        )
        pump.start()
        forwarded: list[int] = []
        with _forwarding_signals(proc, forwarded):
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                # SIGTERM first: the overlay and the testing package flush the trace on it.
                _stop(proc, signal.SIGTERM)
            except KeyboardInterrupt:
                interrupted = True
                _stop(proc, signal.SIGINT)
        pump.join()
        if forwarded:
            notes.append(
                f"goblueprint got {signal.Signals(forwarded[0]).name} and passed it on to the program"
            )
    wall = time.monotonic() - t0
    rc = proc.returncode

    if timed_out:
        error = f"timed out after {timeout}s and was stopped"
    elif interrupted:
        error = "interrupted"
    elif rc is not None and rc < 0:
        error = f"killed by signal {signal.Signals(-rc).name}"
    elif rc:
        error = f"exited with status {rc}"
    have_trace = trace_path.exists() and trace_path.stat().st_size > 0
    if not have_trace:
        trace_path.unlink(missing_ok=True)
        missing = "no trace was written" + (
            f" (a binary must honour {TRACE_ENV} or call trace.Start itself)" if how == "env" else ""
        )
        error = f"{error}; {missing}" if error else missing
    if not schedtrace_ms:
        log_path.unlink()

    gomaxprocs: int | None = procs
    gomaxprocs_source = "--procs" if procs is not None else None
    if sched_lines[0]:
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
        "command": list(command),
        "kind": plan.kind,
        "trace_via": how,
        "go_version": go_version,
        "goroot": str(tc.goroot) if tc is not None and plan.kind != "binary" else None,
        "gomaxprocs": gomaxprocs,
        "gomaxprocs_source": gomaxprocs_source,
        "procs": procs,
        "schedtrace_ms": schedtrace_ms or None,
        "scheddetail": bool(scheddetail and schedtrace_ms),
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
        "error": error,
        "files": {
            "trace": "trace.out" if have_trace else None,
            "schedtrace": "schedtrace.log" if schedtrace_ms else None,
            "binary": exe.name if plan.kind != "binary" else None,
        },
        "schedtrace_lines": sched_lines[0],
        "trace_bytes": trace_path.stat().st_size if have_trace else 0,
        "notes": notes,
    }
    (out_dir / "meta.json").write_text(json.dumps(meta, sort_keys=True, indent=2) + "\n")
    if interrupted:
        raise KeyboardInterrupt
    return CaptureResult(out_dir, meta)
