"""goblueprint: blueprints of the Go runtime scheduler from source, binaries and execution traces."""

__version__ = "0.1.0"
