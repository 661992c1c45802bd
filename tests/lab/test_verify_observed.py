"""`source verify --observed DIR` on a `lab observe` folder: the run confirms edges and names `*` priors."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

DIAGRAM = Path(__file__).resolve().parents[2] / "docs" / "example-p.mmd"


@pytest.mark.slow
def test_a_lab_folder_is_evidence_for_verify(lab_run: Callable[..., Path]) -> None:
    out = lab_run("steal", "1.27")
    proc = subprocess.run(
        [sys.executable, "-m", "goblueprint", "source", "verify", str(DIAGRAM), "--machine", "p",
         "--go", "1.27", "--observed", str(out), "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # the blog diagram keeps its refuted edges
    doc = json.loads(proc.stdout)
    edges = {(e["from"], e["to"]): e for e in doc["edges"]}
    acquired = edges[("_Pidle", "_Prunning")]
    assert acquired["verdict"] == "confirmed" and acquired["observed"]["count"] > 0
    assert "observed" not in edges[("_Pidle", "_Pdead")]  # never seen, still refuted
    assert edges[("_Pidle", "_Pdead")]["verdict"] == "refuted"
    # A `*` store of stop-the-world gets the prior states the run saw at its line.
    stw = [w for w in doc["wildcards"] if w["function"] == "stopTheWorldWithSema"]
    assert stw and any(w["observed_from"] for w in stw)
    assert all(src.startswith("_P") for w in stw for src in w["observed_from"])
