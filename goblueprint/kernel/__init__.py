"""The kernel layer: what the Linux scheduler did to a Go program's threads.

A Go execution trace says which M ran which G on which P; it cannot see the
kernel take that thread off its CPU.  ``perf record -k mono`` can, and its
clock is the one the trace's timestamps come from (CLOCK_MONOTONIC), while
the trace's M ids are OS thread ids — so the two join exactly.

Modules, in the direction the data flows:

* ``perf``      — finding perf, probing which tracepoints may be recorded, the record command
* ``record``    — the capture hook: wraps the program's run in ``perf record``
* ``decode``    — ``perf script`` with explicit fields into one polars table (no object per event)
* ``intervals`` — switch/wakeup events into per-thread on-CPU / off-CPU intervals
* ``join``      — clock alignment and the kernel spans added to a trace's Timeline
* ``metrics``   — per-thread and per-goroutine figures (``trace metrics --kernel``)

See docs/kernel.md.
"""
