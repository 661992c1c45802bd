"""Command-line entry point.

Subcommands are discovered from the modules of this package, so adding a
command means adding one module and touching nothing else:

* ``demo.py`` becomes ``goblueprint demo``;
* ``trace_dump.py`` becomes ``goblueprint trace dump`` (group ``trace``).

Each module defines ``HELP`` (one line), ``prepare_parser(parser)`` and
``run(args) -> int``.  A group may describe itself with ``GROUP_HELP`` in any of
its modules.  Modules keep their top-level imports light (heavy libraries are
imported inside ``run``) so that ``goblueprint --help`` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from goblueprint import __version__
from goblueprint.errors import GoblueprintError, PathError

# numpy's OpenBLAS starts a pool of threads that spin at load time; no command does
# linear algebra, so one thread (set before numpy is first imported) saves that CPU.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# polars' jemalloc keeps a thread's freed pages for 10 s by default, so each stage of a view
# (read a batch, aggregate, let go) stacks its peak on the last one's: returned after 100 ms
# instead, the second run of `trace timeline` on a 30 MB trace peaks at 134 MB, not 143, and
# the ingest at 654 MB, not 714, for the same CPU time (read by jemalloc when polars loads;
# a user's own setting wins).
os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:100,muzzy_decay_ms:0")
# Arrow's default pool, mimalloc, reserves a 1 GiB arena and keeps the pages its freed blocks
# had until it is called again: an ingest of a 368 KB trace ended with 44 MB of them resident.
# glibc's malloc gives them back (heap.give_back between stages): that ingest's peak 214 -> 172
# MB, a 46 MB trace's 298-332 -> 275-278 MB, its CPU time the same (read when pyarrow loads).
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

GROUP_HELP = {
    "toolchain": "find, install and list Go releases",
    "trace": "read Go execution traces",
    "source": "blueprints from the Go source of the runtime",
    "binary": "blueprints from compiled Go binaries",
}


def _command_modules() -> list[tuple[str, str | None, ModuleType]]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if not hasattr(module, "run"):
            continue
        group, _, leaf = info.name.partition("_")
        if leaf:
            found.append((leaf.replace("_", "-"), group, module))
        else:
            found.append((group, None, module))
    return sorted(found, key=lambda item: (item[1] or item[0], item[0]))


EPILOG = (
    "Exit status: 0 on success; 1 on an error (one line on stderr, 'goblueprint: error: ...') or "
    "a partial result of a trace that breaks part-way (0 with --allow-partial); 2 on a wrong command line."
)


class _Parser(argparse.ArgumentParser):
    """argparse, with its complaint on one line in goblueprint's form (exit status 2 as usual)."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("goblueprint").strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"goblueprint: error: {where}{message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="goblueprint",
        description="Blueprints of the Go runtime scheduler: source, binaries and execution traces.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"goblueprint {__version__}")
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    top.required = True
    groups: dict[str, argparse._SubParsersAction] = {}
    modules = _command_modules()
    # A group's line may come from any of its modules, not only the first one listed.
    group_help = dict(GROUP_HELP)
    for _, group, module in modules:
        if group is not None and hasattr(module, "GROUP_HELP"):
            group_help.setdefault(group, module.GROUP_HELP)
    for name, group, module in modules:
        if group is None:
            sub = top.add_parser(name, help=module.HELP, description=module.HELP)
        else:
            if group not in groups:
                help_text = group_help.get(group, group)
                group_parser = top.add_parser(group, help=help_text, description=help_text)
                groups[group] = group_parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
                groups[group].required = True
            sub = groups[group].add_parser(name, help=module.HELP, description=module.HELP)
        module.prepare_parser(sub)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    from goblueprint.timeline.heap import few_arenas

    few_arenas()  # before the command starts its threads
    try:
        code = int(args._run(args) or 0)
        sys.stdout.flush()  # here, so that a pipe closed on what is still buffered is caught below
        return code
    except GoblueprintError as exc:
        print(f"goblueprint: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error of ours. (Before the OSError
        # clause, of which it is a kind: a handler's re-raise is not caught by its siblings.)
        # What is still buffered goes to /dev/null, or its flush at exit would fail again.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.stderr.close()
        return 0
    except OSError as exc:
        if exc.filename is None:
            raise
        # A path no command checked (a bug of ours): still one line, in the paths' words.
        print(f"goblueprint: error: {PathError.from_os(exc.filename, exc, write=None)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("goblueprint: interrupted", file=sys.stderr)
        return 130


def entry() -> None:
    sys.exit(main())
