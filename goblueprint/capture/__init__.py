"""Recording Go programs and tests under the execution tracer and schedtrace.

* :func:`capture` builds and runs one program or test (see ``run.py``);
* ``schedtrace`` parses GODEBUG=schedtrace/scheddetail output;
* ``schedtrace_analysis`` turns it into tables and hints;
* ``crosscheck`` compares schedtrace with counts derived from the trace;
* ``workload/`` is the Go program ``goblueprint demo`` records.
"""

from __future__ import annotations

from goblueprint.capture.run import CaptureResult, capture

__all__ = ["CaptureResult", "capture"]
