"""Which packages a ``go test``/``go run`` command names, and how each is built.

The go command resolves patterns (``net/http``, ``./sub``, ``./...``, files)
relative to the directory it runs in, inside or outside a module, inside
GOROOT/src; so does this module: it asks ``go list`` from the user's working
directory and builds each package by its import path from there, never by a
directory of its own choosing.  (``go test -c -o EXE -- PKG`` would be wrong:
go test hands what follows ``--`` to the test binary and builds ".".)
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from goblueprint import toolchain
from goblueprint.capture.command import Plan, split_flag
from goblueprint.errors import CaptureError

OVERLAY_DIR = Path(__file__).parent / "overlay"
# Names the added files take inside the program's package directory; "0000"
# sorts first, so their variable initialisers run before the program's.  The
# names hold "goblueprint_capture": that is how the analyses tell capture frames
# from the program's (goblueprint.timeline.capture_marks).
OVERLAY_FILES = {
    "0000_goblueprint_capture_common.go": "capture_common.go",
    "0000_goblueprint_capture_exithook_go121.go": "capture_exithook_go121.go",
    "0000_goblueprint_capture_exithook_go123.go": "capture_exithook_go123.go",
}
# Added to package testing (not to the package under test) for test binaries.
TESTING_OVERLAY = ("zz_goblueprint_capture_godebug.go", "capture_testing_godebug.go")
# The flags of `go list` that change which files or packages a build sees.
_LIST_FLAGS = frozenset({"tags", "mod", "modfile", "C"})


@dataclass(frozen=True)
class Package:
    import_path: str
    dir: Path
    name: str
    go_files: tuple[str, ...]
    test_files: int  # _test.go files, internal and external
    build_target: tuple[str, ...]  # what to name on the go command line (import path, or files)


def overlay_files(tc: toolchain.Toolchain) -> dict[str, str]:
    """The added files for this release: the common one and the exit-hook variant.

    The variants carry build constraints too, but go ignores those for files
    named on the command line (`go run a.go b.go`), so the choice is made here.
    """
    variant = "go123" if tc.minor >= (1, 23) else "go121"
    return {
        added: ours for added, ours in OVERLAY_FILES.items() if "exithook" not in added or variant in added
    }


def first_lines(text: str, n: int = 6) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "; ".join(lines[:n]) if lines else "no output"


def _list_flags(build_flags: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(build_flags):
        key, value = split_flag(build_flags[i])
        takes_next = value is None and i + 1 < len(build_flags) and not build_flags[i + 1].startswith("-")
        if key in _LIST_FLAGS:
            out.extend(build_flags[i : i + 2] if takes_next else build_flags[i : i + 1])
        i += 2 if takes_next and key in _LIST_FLAGS else 1
    return out


def resolve(tc: toolchain.Toolchain, plan: Plan, workdir: Path) -> list[Package]:
    """The packages PLAN's target names, as `go list` sees them from WORKDIR."""
    # A cgo package's files are CgoFiles, not GoFiles: both are the package's to read.
    fmt = (
        "{{.ImportPath}}\t{{.Dir}}\t{{.Name}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}"
        '\t{{join .GoFiles " "}} {{join .CgoFiles " "}}'
    )
    proc = tc.run(
        ["list", *_list_flags(plan.build_flags), "-f", fmt, *plan.target],
        cwd=str(workdir),
        check=False,
        user=True,
    )
    if proc.returncode != 0:
        raise CaptureError(f"cannot load {' '.join(plan.target)}: {first_lines(proc.stderr or proc.stdout)}")
    files_given = plan.target[0].endswith(".go")
    packages = []
    for line in proc.stdout.splitlines():
        if not line.strip():
            continue
        path, directory, name, tests, xtests, files = line.split("\t")
        target = tuple(str((workdir / f).resolve()) for f in plan.target) if files_given else (path,)
        packages.append(
            Package(path, Path(directory), name, tuple(files.split()), int(tests) + int(xtests), target)
        )
    if not packages:
        raise CaptureError(f"{' '.join(plan.target)} matched no packages")
    return packages


def build_test(
    tc: toolchain.Toolchain,
    pkg: Package,
    build_flags: list[str],
    exe: Path,
    workdir: Path,
    extra_overlay: dict[str, str] | None = None,
) -> None:
    """`go test -c` of one package, with nothing added to the package under test.

    EXTRA_OVERLAY (file replaced -> replacement) joins the overlay: `goblueprint lab`
    passes an instrumented copy of runtime files this way.

    Package testing gets one file (``overlay/capture_testing_godebug.go``): an
    init function that puts the caller's GODEBUG back, so that processes the
    tests start print no scheduler lines into the capture.  It imports only
    "os", which testing imports already: no import cycle, no goroutine.
    """
    exe.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="goblueprint-overlay-") as tmp:
        added, ours = TESTING_OVERLAY
        overlay = Path(tmp) / "overlay.json"
        replace = {str(tc.goroot / "src" / "testing" / added): str(OVERLAY_DIR / ours)}
        replace.update(extra_overlay or {})
        overlay.write_text(json.dumps({"Replace": replace}, sort_keys=True))
        proc = tc.run(
            [
                "test",
                "-c",
                "-vet=off",
                "-o",
                str(exe),
                *build_flags,
                f"-overlay={overlay}",
                *pkg.build_target,
            ],
            cwd=str(workdir),
            check=False,
            user=True,
        )
    if proc.returncode != 0:
        raise CaptureError(f"go test -c {pkg.import_path} failed: {first_lines(proc.stderr or proc.stdout)}")
    if not exe.exists():
        raise CaptureError(f"{pkg.import_path} has no test files")


def calls_trace_start(pkg: Package) -> bool:
    for name in pkg.go_files:
        try:
            if "trace.Start(" in (pkg.dir / name).read_text(errors="replace"):
                return True
        except OSError:
            continue
    return False


def with_checklinkname(build_flags: list[str], tc: toolchain.Toolchain) -> list[str]:
    """Go 1.23+ links pull-only linknames into the runtime only with -checklinkname=0."""
    if tc.minor < (1, 23):
        return build_flags
    out = []
    merged = False
    i = 0
    while i < len(build_flags):
        flag = build_flags[i]
        key = flag.lstrip("-").split("=")[0]
        if key == "ldflags":
            if "=" in flag:
                value = flag.split("=", 1)[1]
                i += 1
            else:
                value = build_flags[i + 1]
                i += 2
            out.append(f"-ldflags={value} -checklinkname=0")
            merged = True
            continue
        out.append(flag)
        i += 1
    if not merged:
        out.append("-ldflags=-checklinkname=0")
    return out


def build_main(
    tc: toolchain.Toolchain,
    pkg: Package,
    build_flags: list[str],
    exe: Path,
    workdir: Path,
    extra_overlay: dict[str, str] | None = None,
) -> str:
    """`go build` of a main package with the capture overlay; returns how the trace is taken.

    EXTRA_OVERLAY joins the overlay as in build_test.
    """
    if pkg.name != "main":
        raise CaptureError(f"{' '.join(pkg.build_target)} is package {pkg.name}, not a main package")
    exe.unlink(missing_ok=True)
    flags = list(build_flags)
    how = "overlay"
    target = list(pkg.build_target)
    with tempfile.TemporaryDirectory(prefix="goblueprint-overlay-") as tmp:
        replace = dict(extra_overlay or {})
        if calls_trace_start(pkg):
            how = "program"
        else:
            added = overlay_files(tc)
            replace.update({str(pkg.dir / name): str(OVERLAY_DIR / ours) for name, ours in added.items()})
            if target[0].endswith(".go"):
                # Packages given as files take only the files listed, all named the same way.
                target.extend(str(pkg.dir / name) for name in added)
        if replace:
            overlay = Path(tmp) / "overlay.json"
            overlay.write_text(json.dumps({"Replace": replace}, sort_keys=True))
            flags = with_checklinkname([*flags, f"-overlay={overlay}"], tc)
        proc = tc.run(["build", "-o", str(exe), *flags, *target], cwd=str(workdir), check=False, user=True)
    if proc.returncode != 0:
        raise CaptureError(f"go build failed: {first_lines(proc.stderr or proc.stdout)}")
    return how
