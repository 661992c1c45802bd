"""The progress helper draws only on a terminal."""

from __future__ import annotations

import io

from goblueprint.trace.progress import enabled, progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_when_not_a_terminal():
    stream = io.StringIO()
    assert not enabled(stream)
    with progress("reading", total=100, stream=stream) as advance:
        for i in range(0, 101, 10):
            advance(i)
    assert stream.getvalue() == ""


def test_draws_on_a_terminal_with_and_without_total():
    for total, unit in ((1000, "bytes"), (None, "events")):
        stream = _Terminal()
        with progress("reading x.trace", total=total, unit=unit, stream=stream) as advance:
            advance(500)
        shown = stream.getvalue()
        assert "reading x.trace" in shown and ("500" in shown or total is not None), (total, unit)
        assert "/?" not in shown


def test_closed_stream_is_not_a_terminal():
    stream = io.StringIO()
    stream.close()
    assert not enabled(stream)


def test_large_pass_off_a_terminal_prints_a_line_per_stage():
    from goblueprint.trace.progress import STAGE_LINE_BYTES

    stream = io.StringIO()
    with progress("analysing big.trace", unit="events", stream=stream, size=STAGE_LINE_BYTES) as advance:
        advance(10)
    start, end = stream.getvalue().splitlines()
    assert start == f"goblueprint: analysing big.trace ({STAGE_LINE_BYTES / 1e6:.1f} MB) ..."
    assert end.startswith("goblueprint: analysing big.trace: done in ") and end.endswith(" s")
    small = io.StringIO()
    with progress("analysing small.trace", stream=small, size=STAGE_LINE_BYTES - 1):
        pass
    assert small.getvalue() == ""


def test_commands_announce_their_pass_over_a_large_trace(small_trace, tmp_path, monkeypatch, capsys):
    """Off a terminal, a pass over a large trace prints a line as it starts and one as it ends:
    stats' read, the ingest that metrics and pprof make on first use, a pass of metrics' own;
    reading the stored tables afterwards is no pass and prints nothing."""
    import goblueprint.timeline.ingest as ingest_mod
    import goblueprint.trace.progress as prog
    from goblueprint.cli import main

    monkeypatch.setattr(prog, "STAGE_LINE_BYTES", 0)  # every trace counts as large here
    monkeypatch.setattr(ingest_mod, "ANNOUNCE_BYTES", 0)
    monkeypatch.setattr(ingest_mod, "ingest_root", lambda: tmp_path / "ingest")
    trace = small_trace("1.27")
    pprof = ["trace", "pprof", "--type", "sched", str(trace), "-o", str(tmp_path / "p.pb.gz")]
    for verb, argv in (
        ("reading", ["trace", "stats", str(trace)]),
        ("ingesting", ["trace", "metrics", str(trace)]),
        (None, pprof),
        ("analysing", ["trace", "metrics", "--mmu-flags", "stw", str(trace)]),
    ):
        assert main(argv) == 0
        err = capsys.readouterr().err.splitlines()
        if verb is None:
            assert err == [], (argv, err)
            continue
        assert len(err) == 2 and err[0].startswith(f"goblueprint: {verb} {trace.name} ("), (argv, err)
        assert err[1].startswith(f"goblueprint: {verb} {trace.name}") and ": done in " in err[1], (argv, err)
