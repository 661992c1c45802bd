"""`lab observe`: build a program against the instrumented runtime and run it through capture.

Planning, building and running are capture's (same program forms, same trace,
same meta.json); the lab adds its overlay and an environment variable naming
where the runtime dumps its records, then writes lab.json beside them: the
site table, the callers of wrapper sites symbolized from the built binary, and
what happened to the records (written, dropped, cut by a crash).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from goblueprint import toolchain
from goblueprint.arrays import unique
from goblueprint.capture.command import plan_command
from goblueprint.capture.run import CaptureResult, capture
from goblueprint.errors import GoblueprintError, LabError
from goblueprint.lab import instrument, records
from goblueprint.source import facts as source_facts


@dataclass
class Observation:
    capture: CaptureResult
    table: dict[str, Any]

    @property
    def out_dir(self) -> Path:
        return self.capture.out_dir

    @property
    def messages(self) -> list[str]:
        return list(self.table.get("messages", []))


def observe(
    command: list[str],
    out_dir: Path,
    *,
    go: str | None = None,
    capacity: int = instrument.DEFAULT_CAPACITY,
    schedtrace_ms: int = 0,
    procs: int | None = None,
    timeout: float | None = None,
    stdout: IO[bytes] | None = None,
    stderr: IO[bytes] | None = None,
    cwd: Path | None = None,
    knobs: dict[str, str] | None = None,
    kernel: bool = False,
    locks: bool = False,
    perf: str | None = None,
) -> Observation:
    """Record COMMAND's trace and lab records into OUT_DIR (with KNOBS changed, if any).

    KERNEL, LOCKS and PERF record the kernel scheduler as `capture --kernel` does.
    """
    plan = plan_command(command, cwd)
    if plan.kind == "binary":
        raise LabError(
            "lab observe builds the program: give go run …, go test … or a main package, not a binary"
        )
    root = source_facts.resolve(go=go)
    ins = instrument.instrument(root, capacity, knobs)
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in [*out_dir.glob("lab.*.bin"), out_dir / records.SITES_FILE]:
        stale.unlink(missing_ok=True)
    result = capture(
        command,
        out_dir,
        go=go,
        schedtrace_ms=schedtrace_ms,
        procs=procs,
        timeout=timeout,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        extra_overlay=ins.replace,
        extra_env={instrument.OUT_ENV: str(out_dir / "lab")},
        kernel=kernel,
        locks=locks,
        perf=perf,
    )
    table = ins.table()
    table["messages"] = _messages(ins, result, out_dir)
    binary = result.meta["files"].get("binary")
    table["callers"] = _callers(ins, root, out_dir / binary) if binary else {}
    (out_dir / records.SITES_FILE).write_text(json.dumps(table, sort_keys=True, indent=1) + "\n")
    return Observation(result, table)


def _messages(ins: instrument.Instrumented, result: CaptureResult, out_dir: Path) -> list[str]:
    """What a reader of these records must know: sites not instrumented, records lost."""
    out = [f"not instrumented: {m['function']} {m['file']}:{m['line']}: {m['reason']}" for m in ins.missed]
    if "runExitHooks" not in ins.dumps:
        out.append(f"Go {ins.go_version}: no runExitHooks to dump the records from at exit")
    path = records.find_dump(out_dir)
    if path is None:
        error = result.meta.get("error")
        out.append("the program wrote no lab records" + (f" ({error})" if error else ""))
        return out
    try:
        dump = records.read_dump(path, ins.build_id)
    except LabError as exc:
        out.append(str(exc))
        return out
    reason = instrument.DUMP_REASONS.get(dump.header["reason"], f"reason {dump.header['reason']}")
    if reason != "exit":
        out.append(f"the program died ({reason}): records up to its death were dumped")
    if dump.overflow:
        out.append(
            f"buffer full: {dump.overflow} records dropped after the first {dump.header['capacity']} "
            "(raise --buffer)"
        )
    if dump.unfinished:
        out.append(f"{dump.unfinished} records were being written when the dump was taken and are left out")
    return out


def _callers(ins: instrument.Instrumented, root: source_facts.Goroot, binary: Path) -> dict[str, list]:
    """Caller PCs of wrapper sites -> [function, file, line] of the call, with Go's addr2line.

    The PC is a return address, so PC-1 is inside the call instruction; for an inlined
    caller the line is the innermost one and the function is found from the source facts.
    """
    path = records.find_dump(binary.parent)
    if path is None:
        return {}
    try:
        dump = records.read_dump(path, ins.build_id)
    except LabError:
        return {}
    recs = dump.records
    wrappers = np.array(sorted(s.id for s in ins.sites if s.wrapper), dtype=np.uint32)
    pcs = [int(pc) for pc in unique(recs["c"][np.isin(recs["site"], wrappers) & (recs["c"] != 0)])]
    if not pcs:
        return {}
    tc = toolchain.find(ins.go_version)
    try:
        proc = subprocess.run(
            [str(tc.go), "tool", "addr2line", str(binary)],
            input="".join(f"{pc - 1:#x}\n" for pc in pcs),
            capture_output=True,
            text=True,
            env=tc.env(),
            timeout=300,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise LabError(f"cannot run go tool addr2line: {exc}") from exc
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or len(lines) != 2 * len(pcs):
        raise LabError(f"go tool addr2line failed: {(proc.stderr or proc.stdout).strip()[:200]}")
    funcs = source_facts.load(root)["funcs"]
    prefix = str(root.path).rstrip("/") + "/"
    out: dict[str, list] = {}
    for i, pc in enumerate(pcs):
        where = lines[2 * i + 1]
        file, _, line_text = where.rpartition(":")
        try:
            line = int(line_text)
        except ValueError:
            continue
        rel = _goroot_relative(file, prefix, root.path)
        func = _func_at(funcs, rel, line) or lines[2 * i].removeprefix("runtime.")
        out[str(pc)] = [func, rel, line]
    return out


def _goroot_relative(file: str, prefix: str, goroot: Path) -> str:
    """FILE as the source facts name it (src/runtime/proc.go). A program built with
    -trimpath names a standard package's file by its import path (runtime/proc.go)."""
    if file.startswith(prefix):
        return file[len(prefix) :]
    if not file.startswith("/") and (goroot / "src" / file).is_file():
        return f"src/{file}"
    return file


def _func_at(funcs: list[dict[str, Any]], file: str, line: int) -> str | None:
    best = None
    for f in funcs:
        if f["file"] == file and f["line"] <= line <= f["end"]:
            if best is None or f["line"] > best["line"]:  # the innermost (closures are not separate)
                best = f
    return best["name"] if best else None


def summary(obs: Observation) -> str:
    meta = obs.capture.meta
    lines = [f"lab: {obs.out_dir}  (Go {obs.table['go_version']}, {len(obs.table['sites'])} sites)"]
    try:
        _table, dump = records.load(obs.out_dir)
        lines.append(f"  records: {len(dump.records)}  dropped: {dump.overflow}  file: {dump.path.name}")
    except GoblueprintError as exc:
        lines.append(f"  records: none ({exc})")
    trace = meta["files"].get("trace")
    lines.append(f"  trace: {trace or 'none'}  exit: {meta.get('exit_status')}  error: {meta.get('error')}")
    # The kernel recording's own word (on, or why it is off), as capture's summary gives it.
    lines.extend(f"  {n}" for n in meta.get("notes", []) if n.startswith("kernel recording"))
    lines.extend(f"  note: {m}" for m in obs.messages)
    return "\n".join(lines)
