"""What a lab run says when records are lost or cannot be made: a full buffer, a crash,
a site the helper cannot rewrite, a damaged dump. The trace is kept in every case."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from goblueprint.capture.run import CaptureResult
from goblueprint.errors import LabError
from goblueprint.lab import instrument, observe, records
from goblueprint.source import facts

pytestmark = pytest.mark.slow


def test_full_buffer_counts_what_it_dropped(lab_run: Callable[..., Path]) -> None:
    out = lab_run("crash", "1.27", capacity=64)
    table, dump = records.load(out)
    assert len(dump.records) + dump.unfinished == 64
    assert dump.overflow > 0
    assert any(m.startswith(f"buffer full: {dump.overflow} records dropped") for m in table["messages"])
    assert (out / "trace.out").exists() or "no trace" in str(table["messages"])


def test_crash_dumps_records_and_says_so(lab_run: Callable[..., Path]) -> None:
    out = lab_run("crash", "1.27")
    table, dump = records.load(out)
    assert dump.header["reason"] == 3  # fatal panic
    assert "the program died (fatal panic): records up to its death were dumped" in table["messages"]
    meta = (out / "meta.json").read_text()
    assert '"exit_status": 2' in meta
    # Goroutines were started and finished before the panic: their records are there.
    assert len(dump.records) > 40


def test_unrewritable_site_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A site the source layer names but the AST no longer has (another release's line) is
    reported as not instrumented, with the reason, instead of failing silently."""
    real = instrument.status_sites

    def shifted(f: dict) -> list[instrument.Site]:
        sites = real(f)
        bad = sites[0]
        return [instrument.Site(bad.id, bad.kind, bad.function, bad.file, bad.line + 1, bad.mechanism, bad.wrapper),
                *sites[1:]]  # fmt: skip

    monkeypatch.setattr(instrument, "status_sites", shifted)
    monkeypatch.setattr(instrument, "_spec", _spec_trusting_sites)
    ins = instrument.instrument(facts.resolve(go="1.27"))
    assert len(ins.missed) == 1
    assert ins.missed[0]["reason"].startswith("no such write at")
    messages = observe._messages(ins, CaptureResult(tmp_path, {"error": "not run"}), tmp_path)
    assert any(m.startswith("not instrumented: ") for m in messages)


def _spec_trusting_sites(f: dict, sites: list[instrument.Site]) -> dict:
    """The spec as instrument builds it, but from the (shifted) sites alone."""
    fields = {"g_status": "g.atomicstatus", "p_status": "p.status"}
    out = []
    for s in sites:
        fact = next(x for x in f["sites"] if x["file"] == s.file and abs(x["line"] - s.line) <= 1
                    and x["func"] == s.function)  # fmt: skip
        out.append({"id": s.id, "field": fields[s.kind], "how": fact["how"], "callee": fact.get("callee") or "",
                    "file": s.file, "line": s.line, "kind": instrument.states.write_kind(fact),
                    "callerpc": s.wrapper})  # fmt: skip
    return {"sites": out, "entries": [], "objects": instrument.OBJECTS}


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
