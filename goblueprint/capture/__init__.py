"""Recording Go programs and tests under the execution tracer and schedtrace.

* :func:`capture` / :func:`capture_all` build and run a program, or the tests of
  each package a pattern names (see ``run.py``, ``packages.py``);
* ``schedtrace`` parses GODEBUG=schedtrace/scheddetail output;
* ``schedtrace_analysis`` turns it into tables and hints;
* ``crosscheck`` compares schedtrace with counts derived from the trace;
* ``workload/`` is the Go program ``goblueprint demo`` records.
"""

from __future__ import annotations

from goblueprint.capture.run import CaptureResult, capture, capture_all

__all__ = ["CaptureResult", "capture", "capture_all"]
