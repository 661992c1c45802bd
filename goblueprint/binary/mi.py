"""A minimal driver for gdb's machine interface (``gdb --interpreter=mi3``).

Only what ``binary watch`` needs: send a command with a token, wait for its
result record, wait for ``*stopped`` records, and parse MI values (c-strings,
tuples, lists) into Python str/dict/list.
"""

from __future__ import annotations

import queue
import shutil
import subprocess
import threading
from typing import Any

from goblueprint.errors import CaptureError

_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}


def parse_value(text: str, pos: int = 0) -> tuple[Any, int]:
    ch = text[pos]
    if ch == '"':
        out = []
        pos += 1
        while pos < len(text):
            c = text[pos]
            if c == "\\" and pos + 1 < len(text):
                out.append(_ESCAPES.get(text[pos + 1], text[pos + 1]))
                pos += 2
                continue
            if c == '"':
                return "".join(out), pos + 1
            out.append(c)
            pos += 1
        raise CaptureError("gdb/MI: unterminated string")
    if ch in "{[":
        close = "}" if ch == "{" else "]"
        pos += 1
        items: list[Any] = []
        named: dict[str, Any] = {}
        while pos < len(text) and text[pos] != close:
            if text[pos] == ",":
                pos += 1
                continue
            if text[pos] in '"{[':
                value, pos = parse_value(text, pos)
                items.append(value)
            else:
                eq = text.index("=", pos)
                name = text[pos:eq]
                value, pos = parse_value(text, eq + 1)
                named[name] = value
                items.append({name: value})
        if pos >= len(text):
            raise CaptureError("gdb/MI: unterminated tuple or list")
        return (named if ch == "{" else items), pos + 1
    raise CaptureError(f"gdb/MI: unexpected character {ch!r} at {pos}")


def parse_results(text: str) -> dict[str, Any]:
    """The `a=1,b={...}` part of a record."""
    if not text:
        return {}
    value, _ = parse_value("{" + text + "}")
    return value


def parse_record(line: str) -> tuple[str, str, str, dict[str, Any]] | None:
    """(token, kind char, class, results) of a result/async record, else None."""
    i = 0
    while i < len(line) and line[i].isdigit():
        i += 1
    token, rest = line[:i], line[i:]
    if not rest or rest[0] not in "^*=":
        return None
    cls, _, results = rest[1:].partition(",")
    try:
        return token, rest[0], cls, parse_results(results)
    except (ValueError, IndexError, CaptureError):
        # Not an MI record after all (e.g. stray program output): ignore the line.
        return None


class Gdb:
    def __init__(self, binary: str, gdb: str = "gdb") -> None:
        exe = shutil.which(gdb)
        if exe is None:
            raise CaptureError("gdb not found: install Debian's gdb package (apt-get install gdb)")
        try:
            self.proc = subprocess.Popen(
                [exe, "--interpreter=mi3", "-nx", "-q", "-iex", "set auto-load no", binary],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                bufsize=1,
            )
        except OSError as exc:
            raise CaptureError(f"cannot start gdb: {exc}") from exc
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._token = 100
        self.console: list[str] = []
        self.log: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        if self.proc.stdout is None:
            return
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _next(self, timeout: float) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty as exc:
            raise CaptureError(f"gdb did not answer within {timeout:.0f}s") from exc
        if line is None:
            raise CaptureError("gdb exited unexpectedly")
        if line.startswith("~"):
            self.console.append(parse_value(line[1:])[0])
        elif line.startswith("&"):
            self.log.append(parse_value(line[1:])[0])
        return line

    def command(self, cmd: str, timeout: float = 60) -> dict[str, Any]:
        self._token += 1
        token = str(self._token)
        if self.proc.stdin is None:
            raise CaptureError("gdb has no input pipe")
        try:
            self.proc.stdin.write(f"{token}{cmd}\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise CaptureError(f"gdb exited before {cmd.split()[0]}: {exc}") from exc
        while True:
            rec = parse_record(self._next(timeout))
            if rec and rec[0] == token and rec[1] == "^":
                if rec[2] == "error":
                    raise CaptureError(f"gdb: {cmd}: {rec[3].get('msg', 'error')}")
                return rec[3]

    def wait_stopped(self, timeout: float) -> dict[str, Any]:
        """The next *stopped record (breakpoint hit, signal or program exit)."""
        self.log.clear()
        while True:
            rec = parse_record(self._next(timeout))
            if rec and rec[1] == "*" and rec[2] == "stopped":
                return rec[3]
            if rec and rec[1] == "^" and rec[2] == "error":
                # A run or continue gdb gave up after its ^running (a breakpoint it could not
                # insert): no *stopped record follows, so waiting for one would only time out.
                why = " ".join(ln.strip() for ln in self.log if ln.strip())
                raise CaptureError(f"gdb: {rec[3].get('msg', 'error')}" + (f" ({why})" if why else ""))

    def eval(self, expr: str) -> str:
        return self.command(f'-data-evaluate-expression "{expr}"')["value"]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                if self.proc.stdin is None:
                    raise OSError("no stdin")
                self.proc.stdin.write("-interpreter-exec console kill\n-gdb-exit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
