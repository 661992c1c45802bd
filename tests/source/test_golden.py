"""Golden outputs of the synthetic GOROOT; regenerate with GOBLUEPRINT_REGEN=1 after reviewing the change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from goblueprint.cli import main

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
SYNTH = str(HERE / "testdata" / "synthroot")
GOLDEN = HERE / "golden"


@pytest.mark.parametrize(
    ("name", "argv"),
    [
        ("synth_g.json", ["source", "states", "--machine", "g"]),
        ("synth_p.json", ["source", "states", "--machine", "p"]),
        ("synth_p.mmd", ["source", "states", "--machine", "p", "--format", "mermaid", "--indirect"]),
        ("synth_g.dot", ["source", "states", "--machine", "g", "--format", "dot"]),
        ("synth_calls.json", ["source", "calls", "goexit", "schedule", "--json"]),
    ],
)
def test_golden(capsys, name, argv):
    assert main([*argv, "--goroot", SYNTH]) == 0
    out = capsys.readouterr().out
    path = GOLDEN / name
    if os.environ.get("GOBLUEPRINT_REGEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(out)
    assert out == path.read_text(), f"{name} changed; review, then regenerate with GOBLUEPRINT_REGEN=1"
