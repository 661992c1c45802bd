"""The `goblueprint source ...` commands: outputs, determinism, and one-line errors for bad input."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from goblueprint.cli import main

SYNTH = str(Path(__file__).resolve().parent / "testdata" / "synthroot")


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def one_line_error(capsys, *argv, status: int = 1) -> str:
    rc, _, err = run(capsys, *argv)
    assert rc == status
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("goblueprint: error: ")
    return lines[0]


def test_missing_goroot_says_how_to_install(capsys, tmp_path):
    msg = one_line_error(capsys, "source", "states", "--machine", "g", "--goroot", str(tmp_path / "nope"))
    assert "goblueprint toolchain install" in msg


def test_unknown_release_says_how_to_install(capsys):
    msg = one_line_error(capsys, "source", "states", "--machine", "p", "--go", "1.3")
    assert "goblueprint toolchain install 1.3" in msg


def test_malformed_diagram_gives_its_line(capsys, tmp_path):
    bad = tmp_path / "bad.mmd"
    bad.write_text("graph LR\n  A[_Gidle] --> B[_Gdead]\n  A --> --> B\n")
    # Bad input exits 2, apart from a drawing that fails the check (1).
    msg = one_line_error(capsys, "source", "verify", str(bad), "--machine", "g", "--goroot", SYNTH, status=2)
    assert f"{bad}:3:" in msg


def test_missing_diagram_file(capsys, tmp_path):
    msg = one_line_error(
        capsys, "source", "verify", str(tmp_path / "x.mmd"), "--machine", "g", "--goroot", SYNTH, status=2
    )
    assert msg.endswith(f"cannot read {tmp_path / 'x.mmd'}: no such file or directory")


@pytest.mark.slow
def test_unknown_names(capsys):
    assert "no struct gg" in one_line_error(capsys, "source", "struct", "gg", "--goroot", SYNTH)
    assert "no function nosuch" in one_line_error(
        capsys, "source", "calls", "park", "nosuch", "--goroot", SYNTH
    )


@pytest.mark.slow
def test_states_json_is_sorted_and_deterministic(capsys):
    rc, first, _ = run(capsys, "source", "states", "--machine", "g", "--goroot", SYNTH)
    assert rc == 0
    rc, second, _ = run(capsys, "source", "states", "--machine", "g", "--goroot", SYNTH)
    assert first == second
    data = json.loads(first)
    assert first == json.dumps(data, sort_keys=True, indent=2) + "\n"
    assert set(data) == {"go_version", "machine", "states", "transitions"}
    assert data["go_version"] == "1.99.0-synthetic"
    assert set(data["transitions"][0]) >= {"from", "to", "function", "file", "line", "mechanism", "context"}


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["mermaid", "dot", "svg", "md"])
def test_diagram_formats(capsys, fmt):
    rc, out, _ = run(
        capsys, "source", "states", "--machine", "p", "--goroot", SYNTH, "--format", fmt, "--indirect"
    )
    assert rc == 0
    assert "_Prunning" in out
    if fmt == "svg":
        root = ET.fromstring(out)  # well-formed, self-contained
        assert root.tag.endswith("svg")
        # Namespace names are not fetched; nothing else may point outside the file.
        rest = out.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert "http" not in rest.replace('xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    if fmt == "dot":
        assert out.startswith('digraph "p" {') and '"_Pidle" -> "_Prunning"' in out
    if fmt == "md":
        assert "| `_Pidle` | `_Prunning` | `acquirep` | wirep (indirect) |" in out


@pytest.mark.slow
def test_calls_callers_callees_struct_directives(capsys):
    rc, out, _ = run(capsys, "source", "calls", "goexit", "casgstatus", "--goroot", SYNTH)
    assert rc == 0 and out.startswith("goexit -[asm asm_amd64.s:")
    rc, out, _ = run(capsys, "source", "callers", "park_m", "--goroot", SYNTH, "--json")
    assert [(e["caller"], e["kind"]) for e in json.loads(out)] == [("park", "mcall")]
    rc, out, _ = run(capsys, "source", "callees", "park", "--goroot", SYNTH)
    assert "casGToWaiting\tsystemstack\t" in out
    rc, out, _ = run(capsys, "source", "struct", "runtime.p", "--goroot", SYNTH, "--json")
    assert [f["name"] for f in json.loads(out)["fields"]] == ["status", "m"]
    rc, out, _ = run(capsys, "source", "directives", "--name", "nosplit", "--goroot", SYNTH, "--json")
    assert list(json.loads(out)) == ["casgstatus"]


@pytest.mark.slow
def test_contracts_net_conn(capsys):
    rc, out, _ = run(capsys, "source", "contracts", "net", "io", "--json")
    assert rc == 0
    data = json.loads(out)
    conn = next(i for i in data["interfaces"] if i["name"] == "net.Conn")
    assert conn["embedded"] == []
    assert {"Read", "Write", "Close"} <= set(conn["declared"])
    rwc = next(i for i in data["interfaces"] if i["name"] == "io.ReadWriteCloser")
    assert rwc["declared"] == [] and rwc["embedded"] == ["io.Reader", "io.Writer", "io.Closer"]
    impl = next(t for t in data["types"] if t["type"] == "net.Conn")
    assert "io.ReadWriteCloser" in impl["implements"]
    tcp = next(t for t in data["types"] if t["type"] == "net.TCPConn")
    assert "net.Conn" in tcp["via_pointer"] and "net.Conn" not in tcp["implements"]


@pytest.mark.slow
def test_contracts_unknown_package(capsys):
    assert "no package" in one_line_error(capsys, "source", "contracts", "no/such/pkg")


@pytest.mark.slow
def test_diff_between_releases(capsys, real_facts):
    real_facts("1.22")
    rc, out, _ = run(capsys, "source", "diff", "--from", "1.22", "--to", "1.27", "--json")
    assert rc == 0
    d = json.loads(out)
    assert {"_Gleaked", "_Gdeadextra"} <= set(d["states"]["g"]["added"])
    assert d["states"]["p"]["removed"] == ["_Psyscall"]
    removed = {(t["from"], t["to"], t["function"]) for t in d["transitions"]["p"]["removed"]}
    assert ("*", "_Psyscall", "reentersyscall") in removed
    assert "status" not in {f["name"] for f in d["structs"]["changed"].get("p", {}).get("removed", [])}
    assert set(d) == {"from_version", "to_version", "states", "transitions", "structs", "functions"}


@pytest.mark.slow
def test_broken_goroot_files(capsys, tmp_path):
    runtime = tmp_path / "src" / "runtime"
    runtime.mkdir(parents=True)
    (runtime / "a.go").write_text("package runtime\nfunc x( {\n")
    msg = one_line_error(capsys, "source", "states", "--machine", "g", "--goroot", str(tmp_path))
    assert "do not parse" in msg and "a.go:2:" in msg
    rc, out, _ = run(capsys, "source", "parse", "--goroot", str(tmp_path))
    assert rc == 1 and "1 files, 1 parse errors" in out
    (runtime / "a.go").write_text("package runtime\n\nfunc x() {}\n")
    assert "_Gidle is not declared" in one_line_error(capsys, "source", "states", "--machine", "g", "--goroot",
                                                      str(tmp_path))  # fmt: skip


@pytest.mark.slow
def test_parse_synthetic_goroot(capsys):
    rc, out, _ = run(capsys, "source", "parse", "--goroot", SYNTH, "--json")
    assert rc == 0
    files = len(list((Path(SYNTH) / "src").rglob("*.go")))
    assert json.loads(out) == {"go_version": "1.99.0-synthetic", "files": files, "errors": []}
