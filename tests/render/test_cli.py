"""`goblueprint trace timeline` and `goblueprint trace export` on real traces; bad input is one line, exit 1."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import perfetto_read
import pytest

from goblueprint.cli import main
from goblueprint.cli.trace_timeline import parse_duration


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("goblueprint: error: "), err
    return err


def test_parse_duration():
    assert parse_duration("1.5ms") == 1_500_000
    assert parse_duration("20us") == parse_duration("20µs") == 20_000
    assert parse_duration("3s") == 3 * 10**9
    assert parse_duration("42") == 42


def test_bad_input(capsys, tmp_path):
    out = str(tmp_path / "x.html")
    assert f"cannot read {tmp_path / 'nope'}: no such file or directory" in _one_line_error(
        capsys, ["trace", "timeline", str(tmp_path / "nope"), "-o", out]
    )
    assert "bad time" in _one_line_error(
        capsys,
        [
            "trace",
            "timeline",
            "t",
            "-o",
            out.replace(".html", ".svg"),
            "--svg",
            "--from",
            "ten",
            "--to",
            "2ms",
        ],
    )
    garbage = tmp_path / "garbage.trace"
    garbage.write_bytes(b"go 1.27 trace\x00\x00\x00" + bytes(range(256)) * 4)
    _one_line_error(capsys, ["trace", "timeline", str(garbage), "-o", out])
    _one_line_error(capsys, ["trace", "export", "--format", "perfetto", str(garbage), "-o", out])
    assert "--from/--to" in _one_line_error(
        capsys, ["trace", "timeline", str(garbage), "-o", out, "--to", "1ms"]
    )


@pytest.mark.slow
def test_timeline_html_end_to_end(tmp_path, go_trace):
    html = tmp_path / "t.html"
    assert main(["trace", "timeline", str(go_trace("sched")), "-o", str(html)]) == 0
    text = html.read_text()
    assert text.startswith("<!doctype html>") and "gbp-blob" in text
    assert "http://" not in text and "https://" not in text


@pytest.mark.slow
def test_svg_and_exports(capsys, tmp_path, go_trace, sched_timeline, synthetic_timeline, monkeypatch):
    # The trace is built once per session (sched_timeline); the commands get that Timeline.
    from goblueprint.timeline import model

    monkeypatch.setattr(model, "build_timeline", lambda path, **_options: sched_timeline)
    trace = str(go_trace("sched"))
    svg = tmp_path / "t.svg"
    assert main(["trace", "timeline", trace, "--svg", "--from", "0", "--to", "50ms", "-o", str(svg)]) == 0
    ET.fromstring(svg.read_text())
    err = _one_line_error(
        capsys, ["trace", "timeline", trace, "--svg", "--from", "1000s", "--to", "1001s", "-o", str(svg)]
    )
    assert "no spans between" in err
    assert "must be after" in _one_line_error(
        capsys, ["trace", "timeline", trace, "--svg", "--from", "5ms", "--to", "2ms", "-o", str(svg)]
    )
    # The exports themselves are checked on the real trace in test_perfetto/test_chrome; here the wiring.
    monkeypatch.setattr(model, "build_timeline", lambda path, **_options: synthetic_timeline)
    pf = tmp_path / "t.pftrace"
    assert main(["trace", "export", "--format", "perfetto", trace, "-o", str(pf)]) == 0
    assert len(perfetto_read.packets(pf.read_bytes())) > 2 * synthetic_timeline.spans.height
    cj = tmp_path / "t.json"
    assert main(["trace", "export", "--format", "chrome", trace, "-o", str(cj)]) == 0
    assert len(json.loads(cj.read_text())["traceEvents"]) > synthetic_timeline.spans.height
    assert "cannot write" in _one_line_error(
        capsys, ["trace", "export", "--format", "chrome", trace, "-o", str(tmp_path / "no" / "dir.json")]
    )


@pytest.mark.slow
def test_parquet_is_delegated(tmp_path, go_trace):
    pq = tmp_path / "pq"
    assert main(["trace", "export", "--format", "parquet", str(go_trace("sched")), "-o", str(pq)]) == 0
    assert {"spans.parquet", "flows.parquet"} & {p.name for p in pq.iterdir()}
