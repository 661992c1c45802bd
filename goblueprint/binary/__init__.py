"""Blueprints of compiled Go binaries: symbols, DWARF layouts and constants,
disassembly with source lines, call sites, cross-checks against the source and
a gdb-driven watch of the scheduler.

Readers (``elf``, ``pclntab``, ``dwarf``) turn bytes into plain records;
analyses (``layout``, ``disasm``, ``crosscheck``) transform records; the CLI
modules ``goblueprint/cli/binary_*.py`` only format.
"""
