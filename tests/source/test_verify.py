"""`source verify` on drawings with right, wrong and unknown edges, against two real releases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goblueprint.cli import main
from goblueprint.source import diagram, states, verify
from goblueprint.source.calls import CallGraph

pytestmark = pytest.mark.slow

DIAGRAMS = Path(__file__).resolve().parent / "diagrams"


def judge(facts, name, machine):
    edges = diagram.parse((DIAGRAMS / name).read_text(), name)
    bp = states.blueprint(facts, machine)
    return verify.verify(edges, bp, CallGraph(facts), "_" + machine.upper())


@pytest.mark.parametrize("release", ["1.27", "1.22"])
def test_g_drawing(real_facts, release):
    result = judge(real_facts(release), "g_mixed.mmd", "g")
    by_line = {e["line"]: e for e in result["edges"]}
    # _Gidle -> _Grunnable does not exist: newproc1 goes through _Gdead.
    assert by_line[3]["verdict"] == "refuted"
    assert by_line[3]["nearest_path"] == ["_Gidle", "_Gdead", "_Grunnable"]
    assert by_line[3]["label_matches"] == "no"
    # _Gdead -> _Grunnable happens in newproc1, which newproc calls inside a systemstack closure.
    assert by_line[4]["verdict"] == "confirmed" and by_line[4]["exact"]
    assert "newproc1" in {s["function"] for s in by_line[4]["evidence"]}
    assert by_line[4]["label_matches"] == "caller"
    assert by_line[5]["label_matches"] == "performs"  # execute does casgstatus(gp, _Grunnable, _Grunning)
    for line in (6, 7, 8, 9):  # gopark, goready, entersyscall, goexit call the performers
        assert by_line[line]["verdict"] == "confirmed", by_line[line]
        assert by_line[line]["label_matches"] == "caller", by_line[line]
    assert by_line[10]["verdict"] == "unknown"  # "on a queue" is not a status
    missing = {(m["from"], m["to"]) for m in result["missing"]}
    assert ("_Gidle", "_Gdead") in missing and ("_Gdead", "_Grunnable") not in missing


def test_p_drawing_across_releases(real_facts):
    new = {e["line"]: e for e in judge(real_facts("1.27"), "p_state.mmd", "p")["edges"]}
    old = {e["line"]: e for e in judge(real_facts("1.22"), "p_state.mmd", "p")["edges"]}
    assert 2 not in new  # [*] is not a status
    assert new[4]["verdict"] == "confirmed" and new[4]["exact"] and new[4]["label_matches"] == "performs"
    assert new[5]["verdict"] == "confirmed" and new[5]["label_matches"] == "performs"
    # Go 1.26 removed _Psyscall: against 1.27 the edge is refuted, naming the release that removed it.
    assert new[6]["verdict"] == "refuted"
    assert [(r["state"], r["removed_in"], r["became"]) for r in new[6]["removed"]] == [
        ("_Psyscall", "1.26", "_Psyscall_unused")
    ]
    # In 1.22 only stores with an unstated prior status reach _Psyscall: unknown, not confirmed.
    assert old[6]["verdict"] == "unknown" and not old[6]["exact"]
    assert {s["function"] for s in old[6]["evidence"]} >= {"reentersyscall"}
    assert {s["from"] for s in old[6]["evidence"]} == {"*"}
    # entersyscall always calls reentersyscall, so it is itself an (indirect) P transition.
    assert old[6]["label_matches"] == "performs"
    assert any(s["function"] == "entersyscall" and s["indirect"] for s in old[6]["evidence"])
    # _Pdead is written only by (*p).destroy, which asserts the world is stopped: from _Pgcstop.
    assert new[7]["verdict"] == "confirmed" and new[7]["exact"]
    assert {(s["function"], s["prior"]) for s in new[7]["evidence"] if not s["indirect"]} == {
        ("(*p).destroy", "world-stopped")
    }
    assert new[9]["from"] == "_Pidle"  # label "_Pidle (on the idle list)" maps to the constant


def test_cli_exit_status_and_json(real_facts, capsys, tmp_path):
    real_facts("1.27")
    assert main(["source", "verify", str(DIAGRAMS / "g_mixed.mmd"), "--machine", "g", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert {e["verdict"] for e in out["edges"]} == {"confirmed", "refuted", "unknown"}
    good = tmp_path / "good.mmd"
    good.write_text("stateDiagram-v2\n  _Gidle --> _Gdead : newproc1\n  _Gdead --> _Grunnable : newproc\n")
    assert main(["source", "verify", str(good), "--machine", "g"]) == 0
    text = capsys.readouterr().out
    assert "line 2: _Gidle -> _Gdead [newproc1]: CONFIRMED" in text
    assert "label caller" in text
