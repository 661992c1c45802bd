"""`source verify --observed DIR`: run-time records confirm edges and name the prior states of `*` stores.

DIR/transitions.json is the interface with the lab (`lab transitions --json` writes that shape).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goblueprint.cli import main
from goblueprint.errors import SourceError
from goblueprint.source import observed

pytestmark = pytest.mark.slow

EXAMPLE_P = str(Path(__file__).resolve().parents[2] / "docs" / "example-p.mmd")


def write(tmp_path: Path, doc) -> Path:
    (tmp_path / observed.FILE_NAME).write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return tmp_path


def reentersyscall_store(real_facts) -> dict:
    site = next(
        s for s in real_facts("1.25")["sites"]
        if s["func"] == "reentersyscall" and s["field"] == "p.status"
    )  # fmt: skip
    return {"file": site["file"], "line": site["line"]}


def test_observation_confirms_and_names_the_prior_state(real_facts, tmp_path, capsys):
    where = reentersyscall_store(real_facts)
    rows = [
        {"from": "_Prunning", "to": "_Psyscall", "function": "reentersyscall", **where, "count": 7},
        {"from": "_Pidle", "to": "_Prunning", "function": "acquirep", "file": "src/runtime/proc.go",
         "line": 1, "count": 3},
    ]  # fmt: skip
    obs = write(tmp_path, {"machine": "p", "transitions": rows})
    rc = main(
        ["source", "verify", EXAMPLE_P, "--machine", "p", "--go", "1.25", "--observed", str(obs), "--json"]
    )
    out = json.loads(capsys.readouterr().out)
    by_line = {e["line"]: e for e in out["edges"]}
    # Statically unknown (reentersyscall does not state the prior status); seen 7 times at run time.
    assert by_line[7]["verdict"] == "confirmed" and by_line[7]["confirmed_by"] == "observation"
    assert by_line[7]["static_verdict"] == "unknown" and by_line[7]["observed"]["count"] == 7
    # Statically confirmed edges keep their verdict and gain the count.
    assert by_line[5]["verdict"] == "confirmed" and "confirmed_by" not in by_line[5]
    assert by_line[5]["observed"]["count"] == 3
    # The `*` store gets the prior states observed at its line.
    wild = [w for w in out["wildcards"] if (w["file"], w["line"]) == (where["file"], where["line"])]
    assert [w["observed_from"] for w in wild] == [{"_Prunning": 7}]
    assert rc == 1  # _Psyscall -> _Prunning and _Pidle -> _Pdead are still refuted


def test_without_observation_the_same_edge_is_unknown(real_facts, capsys):
    real_facts("1.25")
    assert main(["source", "verify", EXAMPLE_P, "--machine", "p", "--go", "1.25", "--json"]) == 1
    by_line = {e["line"]: e for e in json.loads(capsys.readouterr().out)["edges"]}
    assert by_line[7]["verdict"] == "unknown" and "observed" not in by_line[7]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"machine": "p", "transitions": [', "not JSON at byte 33"),
        ('{"machine": "x", "transitions": []}', '"machine": "g" or "p"'),
        ('{"machine": "p"}', '"transitions": [...]'),
        ('{"machine": "p", "transitions": [{"from": "_Pidle", "to": "_Prunning"}]}', "transitions[0]"),
        ('{"machine": "p", "transitions": [{"from": "_Pidle", "to": "_Prunning", "count": -1}]}', "negative"),
    ],
)
def test_malformed_records_are_errors(tmp_path, text, message):
    with pytest.raises(SourceError, match=message.replace("[", r"\[").replace(".", r"\.")):
        observed.observed_edges(write(tmp_path, text), "p")


def test_records_of_the_other_machine_are_refused(tmp_path):
    rows = [{"from": "_Grunning", "to": "_Gwaiting", "count": 1}]
    with pytest.raises(SourceError, match="records the G machine"):
        observed.observed_edges(write(tmp_path, {"machine": "g", "transitions": rows}), "p")


def test_cli_bad_observed_dir_exits_2(tmp_path, capsys):
    rc = main(["source", "verify", EXAMPLE_P, "--machine", "p", "--observed", str(tmp_path / "none")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("goblueprint: error: ")
