"""Memory of ``goblueprint trace view`` serving tiles, beside ``go tool trace`` serving its views.

    .venv/bin/python bench/trace_view.py [--trace PATH] [--scale 100] [--src DIR]

On one trace (default: tests/goprogs/big at GOBLUEPRINT_SCALE=100, about 30 MB), in one run:

* ours: ``goblueprint trace view TRACE --port 0`` (the trace ingested and its levels of
  detail stored beforehand, as a second view of a trace finds them), its resident memory
  (VmRSS, and the peak VmHWM from /proc) once the page is served, then after each of a
  few tile requests a reader's zooming makes: the coarse level over the whole trace for
  the first 40 lanes, a 1 ms window (exact spans) for them, and every lane at level 2;
  the wake-up arrows of a 3 ms window and of the whole trace, and a goroutine search;
  then Ctrl-C (SIGINT), which must exit 0;
* Go's: ``go tool trace -http=127.0.0.1:0 TRACE`` (the bundled Go; the memory is that of
  the trace tool the go command runs as its child), its memory once it listens and after serving
  the data of its first trace view (/jsontrace: the whole trace by procs, or its first range).

Prints one line per step: resident and peak memory in MB, bytes answered.  Writes JSON to
bench/results/trace_view-<UTC time>.json as well.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from trace_read import RESULTS, go_env, produce_trace  # noqa: E402

PYTHON = (sys.executable, "-P", "-m")


def memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of PID in bytes."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
    )
    return (int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024)


def wait_line(proc: subprocess.Popen[str], pattern: str, timeout: float) -> re.Match[str]:
    """The first line of PROC's stdout matching PATTERN (its stderr goes to ours)."""
    end = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                raise SystemExit(f"{proc.args[0]} exited with {proc.returncode} before serving")
            continue
        m = re.search(pattern, line)
        if m:
            return m
    raise SystemExit(f"no line matching {pattern!r} within {timeout} s")


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=600) as r:
        return r.read()


def ours(trace: Path, env: dict[str, str]) -> list[dict[str, object]]:
    subprocess.run([*PYTHON, "goblueprint", "trace", "ingest", str(trace)], env=env, check=True)
    cmd = [*PYTHON, "goblueprint", "trace", "view", str(trace), "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    rows = []
    try:
        url = wait_line(proc, r"(http://\S+/)", 1800).group(1)
        page = fetch(url)
        rows.append({"step": "page served", "bytes": len(page), "mem": memory(proc.pid)})
        header = json.loads(re.search(rb'id="gbp-header">(.*?)</script>', page, re.S).group(1))
        duration, lanes = header["duration"], len(header["lanes"])
        count = header["detail"]["count"]
        first = ",".join(str(i) for i in range(min(40, lanes)))
        mid = duration // 2
        asks = [
            ("40 lanes, level 1, whole trace", f"lanes={first}&level=1&from=0&to={duration}"),
            ("40 lanes, 1 ms window", f"lanes={first}&level={count - 1}&from={mid}&to={mid + 1_000_000}"),
        ]
        for lo in range(0, lanes, 256):
            part = ",".join(str(i) for i in range(lo, min(lanes, lo + 256)))
            asks.append((f"lanes {lo}.., level 2, whole trace", f"lanes={part}&level=2&from=0&to={duration}"))
        asks = [(name, "tile?" + query) for name, query in asks]
        # The arrows of three 1 ms views (what the page asks zoomed in) and of the whole trace
        # (answered with their count only), and a goroutine search by block reason.
        asks += [
            ("wake-up arrows, 3 ms window", f"flows?from={mid - 2_000_000}&to={mid + 1_000_000}"),
            ("wake-up arrows, whole trace (count)", f"flows?from=0&to={duration}"),
            ("search 'chan receive'", "search?q=chan%20receive"),
        ]
        for name, query in asks:
            t0 = time.perf_counter()
            body = fetch(url + query)
            rows.append(
                {
                    "step": name,
                    "bytes": len(body),
                    "mem": memory(proc.pid),
                    "seconds": time.perf_counter() - t0,
                }
            )
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    rows.append({"step": "Ctrl-C", "exit": code})
    return rows


def go_tool_trace(trace: Path) -> list[dict[str, object]]:
    genv = go_env()
    cmd = [genv["GO"], "tool", "trace", "-http=127.0.0.1:0", str(trace)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=genv)
    rows = []
    try:
        url = wait_line(proc, r"listening on (http://\S+)", 1800).group(1).rstrip("/") + "/"
        # `go tool trace` runs the trace tool (built into the Go cache) as its child: measure that.
        # (Any thread of it may have started the child.)
        children = [
            c for t in Path(f"/proc/{proc.pid}/task").iterdir() for c in (t / "children").read_text().split()
        ]
        pid = int(children[0]) if children else proc.pid
        index = fetch(url)
        rows.append({"step": "listening, index served", "bytes": len(index), "mem": memory(pid)})
        # The first trace view: the whole trace by procs, or its first range in a large trace.
        m = re.search(rb'href="/?trace\?([^"]*)"', index)
        if m:
            query = m.group(1).decode().replace("&amp;", "&")
            t0 = time.perf_counter()
            body = fetch(url + "jsontrace?" + query)
            rows.append(
                {
                    "step": "first range of the trace view (/jsontrace)",
                    "bytes": len(body),
                    "mem": memory(pid),
                    "seconds": time.perf_counter() - t0,
                }
            )
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a loaded machine: its figures are taken already
            proc.kill()
            proc.wait()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trace", type=Path)
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--src", type=Path, help="checkout whose goblueprint runs (default: this one)")
    args = parser.parse_args()
    trace = args.trace or produce_trace(args.scale)
    env = dict(os.environ, PYTHONPATH=str((args.src or ROOT).resolve()))
    print(f"trace {trace} ({trace.stat().st_size / 1e6:.1f} MB)")
    results = {"goblueprint trace view": ours(trace, env), "go tool trace": go_tool_trace(trace)}
    for tool, rows in results.items():
        for row in rows:
            mem = row.get("mem")
            shown = (
                f"RSS {mem[0] / 1e6:7.0f} MB  peak {mem[1] / 1e6:7.0f} MB" if mem else f"exit {row['exit']}"
            )
            size = f"  {row['bytes'] / 1e6:8.2f} MB answered" if "bytes" in row else ""
            secs = f"  in {row['seconds']:.2f} s" if "seconds" in row else ""
            print(f"{tool:<24} {row['step']:<42} {shown}{size}{secs}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    doc = {"trace": str(trace), "size": trace.stat().st_size, "results": results}
    (RESULTS / f"trace_view-{stamp}.json").write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
