"""The schedtrace and demo commands, and bad input through the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from goblueprint.capture import demo, schedtrace
from goblueprint.cli import main

DATA = Path(__file__).resolve().parent / "data"


def test_schedtrace_json_matches_the_parser_and_is_sorted(capsys: pytest.CaptureFixture[str]) -> None:
    log = DATA / "scheddetail-go1.27.3.log"
    assert main(["schedtrace", "--json", str(log)]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert doc["samples"] == schedtrace.parse(log.read_text()).to_json()["samples"]
    assert out.strip() == json.dumps(doc, sort_keys=True)


@pytest.mark.parametrize("suffix", [".svg", ".png", ".html"])
def test_schedtrace_plot(suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"plot{suffix}"
    assert main(["schedtrace", "--plot", str(out), str(DATA / "schedtrace-go1.22.10.log")]) == 0
    data = out.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG")
    else:
        text = data.decode()
        assert "<svg" in text
        # Offline: nothing loaded from elsewhere (namespace URIs are names, not loads).
        assert re.search(r"""(?:src|href)=["'](?:https?:)?//""", text) is None
        assert "<script" not in text
    printed = capsys.readouterr().out
    samples = len(schedtrace.parse((DATA / "schedtrace-go1.22.10.log").read_text()).samples)
    assert f"{samples} samples" in printed


def test_schedtrace_text_table(capsys: pytest.CaptureFixture[str]) -> None:
    log = DATA / "schedtrace-go1.27.3.log"
    assert main(["schedtrace", str(log)]) == 0
    out = capsys.readouterr().out
    parsed = schedtrace.parse(log.read_text())
    assert f"{len(parsed.samples)} samples over {parsed.samples[-1].t_ms - parsed.samples[0].t_ms} ms" in out


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("goblueprint: error: ")
    return err[0]


def test_schedtrace_log_with_foreign_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (DATA / "schedtrace-go1.27.3.log").read_text().splitlines()
    lines.insert(4, "panic: something the program printed")
    log = tmp_path / "mixed.log"
    log.write_text("\n".join(lines))
    assert main(["schedtrace", str(log)]) == 1
    line = _one_error_line(capsys)
    assert re.search(r"mixed\.log: line 5: not a schedtrace line: 'panic: something", line)
    assert "--lenient" in line
    assert main(["schedtrace", "--lenient", str(log)]) == 0
    assert "1 foreign lines skipped" in capsys.readouterr().out


def test_schedtrace_bad_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedtrace", str(tmp_path / "missing.log")]) == 1
    assert "cannot read" in _one_error_line(capsys)
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert main(["schedtrace", str(empty)]) == 1
    assert "no SCHED lines" in _one_error_line(capsys)
    assert main(["schedtrace", "--plot", str(tmp_path / "x.pdf"), str(DATA / "schedtrace-go1.27.3.log")]) == 1
    assert "a plot is written as .svg, .png, .html, not .pdf" in _one_error_line(capsys)


def test_capture_unknown_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", "-o", str(tmp_path), "--", "frobnicate", "x"]) == 1
    assert "unknown command 'frobnicate'" in _one_error_line(capsys)
    assert main(["capture", "-o", str(tmp_path)]) == 1
    assert "no command" in _one_error_line(capsys)


def test_demo_step_of_a_missing_command_is_skipped_with_a_note(tmp_path: Path) -> None:
    step = demo.Step("x.txt", "not yet", "no_such_command", ("no", "such"), stdout=True, needs=())
    result = demo.run_step(step, tmp_path, {})
    assert result.status == "skipped" and "does not exist yet" in result.message
    assert not (tmp_path / "x.txt").exists()


def test_demo_step_runs_the_real_command(tmp_path: Path) -> None:
    values = {"schedtrace": str(DATA / "schedtrace-go1.27.3.log"), "trace": None}
    by_name = {s.name: s for s in demo.STEPS}
    ok = demo.run_step(by_name["schedtrace.json"], tmp_path, values)
    assert ok.status == "ok"
    assert json.loads((tmp_path / "schedtrace.json").read_text())["samples"]
    needs_trace = demo.run_step(by_name["timeline.html"], tmp_path, values)
    assert needs_trace.status == "skipped" and "no trace" in needs_trace.message
    failing = demo.run_step(
        by_name["schedtrace.json"], tmp_path, {"schedtrace": str(tmp_path / "missing.log")}
    )
    assert failing.status == "failed" and "cannot read" in failing.message


def test_index_escapes_untrusted_strings() -> None:
    step = demo.Step("<b>.txt", "t", "schedtrace", ())
    page = demo.index_html(
        "<script>x</script>", "<img src=x>", [demo.StepResult(step, "failed", 0, "<i>")], []
    )
    assert "<script>x" not in page and "<img" not in page and "<b>" not in page and "<i>" not in page
