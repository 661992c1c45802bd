"""The runtime lab: programs built against an instrumented copy of the runtime.

instrument.py finds the sites (through the source layer's facts) and has the Go
helper rewrite them; observe.py builds and runs a program through capture with
that overlay; records.py reads the dump; transitions.py and friends analyse it.
"""
