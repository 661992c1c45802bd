"""The declarative workload format (TOML or JSON) and its compilation to a Program.

    procs = 4                       # optional GOMAXPROCS
    channels = { jobs = 0, results = 4 }   # name = capacity
    mutexes = ["mu"]
    gc = { every_ms = 50, stw_us = 100 }   # optional periodic stop-the-world

    [goroutine.main]                # "main" starts the program
    ops = [
      { spawn = "worker", count = 4 },
      { repeat = 100, ops = [ { cpu_us = 20 }, { send = "jobs" } ] },
    ]

    [goroutine.worker]
    ops = [ { repeat = 25, ops = [ { recv = "jobs" }, { cpu_us = 200 }, { lock = "mu" },
                                   { cpu_us = 5 }, { unlock = "mu" } ] } ]

Operations: ``cpu_us``/``cpu_ns``, ``sleep_us``, ``syscall_us``, ``net_us``,
``send``/``recv`` (a channel), ``lock``/``unlock`` (a mutex), ``spawn`` (+``count``),
``yield`` (runtime.Gosched), ``repeat`` (+``ops``).  Errors name the goroutine and the operation's index.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from goblueprint.errors import PathError, UsageError
from goblueprint.model import program as P
from goblueprint.model.program import Op, Program

_EXPANDED_LIMIT = 5_000_000  # operations after expanding repeats: a typo'd repeat count should not hang


class WorkloadError(UsageError):
    """A workload file that is not valid."""


def load(path: str | Path) -> Program:
    path = Path(path)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise PathError.from_os(path, exc) from None
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text.decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise WorkloadError(
            f"{path}: not valid {'JSON' if path.suffix == '.json' else 'TOML'}: {exc}"
        ) from None
    return compile_workload(data, str(path))


def compile_workload(data: dict[str, Any], where: str = "workload") -> Program:
    if not isinstance(data, dict):
        raise WorkloadError(f"{where}: expected a table at the top")
    gs = data.get("goroutine")
    if not isinstance(gs, dict) or "main" not in gs:
        raise WorkloadError(f"{where}: needs [goroutine.main]")
    prog = Program()
    prog.procs = _int(data.get("procs", 0), f"{where}: procs")
    chans = data.get("channels", {})
    if not isinstance(chans, dict):
        raise WorkloadError(f"{where}: channels must be a table of name = capacity")
    chan_ids = {name: i for i, name in enumerate(chans)}
    prog.channels = [_int(cap, f"{where}: channel {name}") for name, cap in chans.items()]
    mutexes = data.get("mutexes", [])
    if not isinstance(mutexes, list):
        raise WorkloadError(f"{where}: mutexes must be a list of names")
    mu_ids = {str(name): i for i, name in enumerate(mutexes)}
    prog.mutexes = len(mu_ids)
    tmpl_ids = {name: i for i, name in enumerate(gs)}
    for name, body in gs.items():
        if not isinstance(body, dict) or not isinstance(body.get("ops"), list):
            raise WorkloadError(f"{where}: goroutine.{name} needs ops = [...]")
        out: list[Op] = []
        _compile_ops(body["ops"], out, f"{where}: goroutine.{name}", chan_ids, mu_ids, tmpl_ids)
        prog.add_template(f"main.{name}", out)
    prog.roots.append((0, tmpl_ids["main"]))
    gc = data.get("gc")
    if gc is not None:
        if not isinstance(gc, dict):
            raise WorkloadError(f"{where}: gc must be a table")
        every = _int(gc.get("every_ms", 0), f"{where}: gc.every_ms") * 1_000_000
        stw = _int(gc.get("stw_us", 0), f"{where}: gc.stw_us") * 1000
        until = _int(gc.get("until_ms", 1000), f"{where}: gc.until_ms") * 1_000_000
        if every > 0:
            prog.stw = [(t, stw, "stop-the-world (GC)") for t in range(every, until + 1, every)]
    return prog


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise WorkloadError(f"{what}: expected a non-negative integer, not {v!r}")
    return v


def _compile_ops(items: list[Any], out: list[Op], where: str, chans: dict[str, int], mus: dict[str, int],
                 tmpls: dict[str, int]) -> None:  # fmt: skip
    def ref(table: dict[str, int], name: Any, kind: str, at: str) -> int:
        if name not in table:
            raise WorkloadError(f"{at}: unknown {kind} {name!r}")
        return table[name]

    for i, item in enumerate(items):
        at = f"{where} op {i}"
        if not isinstance(item, dict) or not item:
            raise WorkloadError(f"{at}: expected a table like {{ cpu_us = 10 }}")
        if "repeat" in item:
            body: list[Op] = []
            _compile_ops(item.get("ops", []), body, at, chans, mus, tmpls)
            n = _int(item["repeat"], f"{at}: repeat")
            if len(out) + n * len(body) > _EXPANDED_LIMIT:
                raise WorkloadError(f"{at}: more than {_EXPANDED_LIMIT} operations once repeated")
            out.extend(body * n)
        elif "cpu_us" in item or "cpu_ns" in item:
            ns = (
                _int(item["cpu_ns"], f"{at}: cpu_ns")
                if "cpu_ns" in item
                else _int(item["cpu_us"], f"{at}: cpu_us") * 1000
            )
            out.append((P.CPU, ns, 0))
        elif "sleep_us" in item:
            out.append((P.SLEEP, _int(item["sleep_us"], f"{at}: sleep_us") * 1000, 0))
        elif "syscall_us" in item:
            out.append((P.SYSCALL, _int(item["syscall_us"], f"{at}: syscall_us") * 1000, 0))
        elif "net_us" in item:
            out.append((P.NET, _int(item["net_us"], f"{at}: net_us") * 1000, 0))
        elif "send" in item:
            out.append((P.SEND, ref(chans, item["send"], "channel", at), 0))
        elif "recv" in item:
            out.append((P.RECV, ref(chans, item["recv"], "channel", at), 0))
        elif "lock" in item:
            out.append((P.LOCK, ref(mus, item["lock"], "mutex", at), 0))
        elif "unlock" in item:
            out.append((P.UNLOCK, ref(mus, item["unlock"], "mutex", at), 0))
        elif "yield" in item:
            out.append((P.YIELD, 0, 0))
        elif "spawn" in item:
            out.append(
                (
                    P.SPAWN,
                    ref(tmpls, item["spawn"], "goroutine", at),
                    _int(item.get("count", 1), f"{at}: count"),
                )
            )
        else:
            raise WorkloadError(f"{at}: unknown operation {sorted(item)}")
