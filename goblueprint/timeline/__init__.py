"""Timelines of execution traces: the G/P/M state model and what is computed from it.

``model`` holds the columnar ``Timeline`` that renderers consume; ``builder``
turns the event stream into it; ``summary`` mirrors Go's per-goroutine
analysis (internal/trace/summary.go); ``metrics``, ``pprof`` and ``tables``
compute from those.
"""
