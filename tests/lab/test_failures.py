"""What a lab run says when records are lost or cannot be made: a full buffer, a crash,
a site the helper cannot rewrite, a damaged dump. The trace is kept in every case."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from goblueprint.capture.run import CaptureResult
from goblueprint.errors import LabError, PathError
from goblueprint.lab import instrument, observe, records
from goblueprint.lab import probes as lab_probes
from goblueprint.source import facts

from .conftest import LAB_GOPROGS

pytestmark = pytest.mark.slow


def test_full_buffer_counts_what_it_dropped(lab_run: Callable[..., Path]) -> None:
    out = lab_run("crash", "1.27", capacity=64)
    table, dump = records.load(out)
    assert len(dump.records) + dump.unfinished == 64
    assert dump.overflow > 0
    assert any(m.startswith(f"buffer full: {dump.overflow} records dropped") for m in table["messages"])
    _assert_trace_kept(out)


def test_crash_dumps_records_and_says_so(lab_run: Callable[..., Path]) -> None:
    out = lab_run("crash", "1.27")
    table, dump = records.load(out)
    assert dump.header["reason"] == 3  # fatal panic
    assert "the program died (fatal panic): records up to its death were dumped" in table["messages"]
    meta = (out / "meta.json").read_text()
    assert '"exit_status": 2' in meta
    # Goroutines were started and finished before the panic: their records are there.
    assert len(dump.records) > 40
    _assert_trace_kept(out)


def _assert_trace_kept(out: Path) -> None:
    """The run's execution trace is there and Go's format reader takes it (events, no error)."""
    from goblueprint.trace.store import events_frame

    assert events_frame(str(out / "trace.out")).height > 50


def test_unrewritable_probe_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, go_toolchain: Callable[[str], object]
) -> None:
    """A probe whose anchor or names a release lacks is reported as not instrumented, with
    the reason, and the build goes on without it (no silent gap): a real run of a program
    says so in its messages, keeps its trace, and has the records of every other site."""
    real = lab_probes.probes

    def with_bad(f: dict) -> tuple[list[lab_probes.Probe], list[str]]:
        found, notes = real(f)
        bad = [
            lab_probes.Probe("steal", "runqsteal", "goblueprintLabEvent({site}, uint64(victim.id), 0, 0, 0)",
                             after="runqgrab"),
            lab_probes.Probe("steal", "runqsteal", "goblueprintLabEvent({site}, 0, 0, 0, 0)", after="noSuchCall"),
        ]  # fmt: skip
        return [*found, *bad], notes

    monkeypatch.setattr(instrument.lab_probes, "probes", with_bad)
    ins = instrument.instrument(facts.resolve(go="1.27"))
    reasons = sorted(m["reason"] for m in ins.missed)
    assert len(reasons) == 2, reasons
    assert reasons[1] == "runqsteal has no statement calling noSuchCall"
    assert reasons[0].startswith("runqsteal at src/runtime/proc.go:") and reasons[0].endswith(
        "no victim in scope"
    )
    messages = observe._messages(ins, CaptureResult(tmp_path, {"error": "not run"}), tmp_path)
    assert sum(m.startswith("not instrumented: runqsteal") for m in messages) == 2
    assert "the program wrote no lab records (not run)" in messages

    # The same overlay reaches Go as a normal lab build of the program (the two probes
    # edit nothing), so this run costs no runtime build of its own.
    go_toolchain("1.27")
    out = tmp_path / "run"
    obs = observe.observe(["."], out, go="1.27", cwd=LAB_GOPROGS / "steal", stdout=subprocess.DEVNULL)  # type: ignore[arg-type]
    assert obs.capture.ok
    table, dump = records.load(out)
    said = [m for m in table["messages"] if m.startswith("not instrumented: runqsteal")]
    assert len(said) == 2 and any(m.endswith("has no statement calling noSuchCall") for m in said), said
    kinds = {s["id"]: s["kind"] for s in table["sites"]}
    assert {kinds[int(i)] for i in np.unique(dump.records["site"])} >= {"g_status", "p_status", "steal"}
    _assert_trace_kept(out)


def test_damaged_dumps_raise_lab_errors_with_offsets(lab_run: Callable[..., Path], tmp_path: Path) -> None:
    out = lab_run("crash", "1.27")
    good = records.find_dump(out)
    assert good is not None
    data = good.read_bytes()
    cut = tmp_path / "lab.1.bin"
    cut.write_bytes(data[:-10])
    with pytest.raises(LabError, match=r"truncated record .*offset \d+"):
        records.read_dump(cut)
    bad = tmp_path / "lab.2.bin"
    bad.write_bytes(b"NOTALAB!" + data[8:])
    with pytest.raises(LabError, match=r"not a goblueprint lab dump.*offset 0"):
        records.read_dump(bad)
    short = tmp_path / "lab.3.bin"
    short.write_bytes(data[: records.HEADER.itemsize + 64 * 2])
    with pytest.raises(LabError, match="records where the header announces"):
        records.read_dump(short)
    assert np.all(records.read_dump(good).records["t"] > 0)


def test_signal_dumps_records_and_keeps_the_trace(lab_run: Callable[..., Path]) -> None:
    out = lab_run("sleepy", "1.27", timeout=1.0)
    table, dump = records.load(out)
    assert dump.header["reason"] == 2  # fatal signal: SIGTERM after capture's handler stopped the trace
    assert "the program died (fatal signal): records up to its death were dumped" in table["messages"]
    assert (out / "trace.out").stat().st_size > 0
    assert len(dump.records) > 20


def test_a_path_that_is_not_a_lab_folder_reads_as_every_path_does(tmp_path):
    # The paths' own words (cannot read X: ...), not Python's "[Errno 2] ...".
    with pytest.raises(PathError, match=r"^cannot read .*/missing: no such file or directory$"):
        records.load(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(PathError, match=r"^cannot read .*/file: not a directory$"):
        records.load(tmp_path / "file")
    with pytest.raises(LabError, match=r"is not a lab folder \(no lab.json"):
        records.load(tmp_path)
