"""Each prior-status rule and each status write form, on a hand-built GOROOT (testdata/priorroot).

Every case in priors.go is marked by a trailing comment (`// P-guard`); the expected records are
read from the file, so each assertion names one rule and fails when that rule is taken out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goblueprint.source import facts, states

pytestmark = pytest.mark.slow  # builds the Go helper on a cold cache

ROOT = Path(__file__).resolve().parent / "testdata" / "priorroot"
PRIORS_GO = ROOT / "src" / "runtime" / "priors.go"


def line_of(marker: str) -> int:
    hits = [i for i, ln in enumerate(PRIORS_GO.read_text().splitlines(), 1) if ln.endswith(f"// {marker}")]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


@pytest.fixture(scope="module")
def prior_facts():
    return facts.load(facts.resolve(goroot=str(ROOT)))


def at(prior_facts, machine: str, marker: str) -> set[tuple[str, str, str, bool]]:
    line = line_of(marker)
    return {
        (t.src, t.dst, t.prior, t.indirect)
        for t in states.blueprint(prior_facts, machine).transitions
        if t.line == line
    }


# (machine, marker, {(from, to, prior, indirect)}): one row per rule and write form.
CASES = [
    # the old value of a CAS: through a wrapper, and a direct CAS on atomicstatus pinned by a throw-guard
    ("g", "G-cas-wrapper", {("_Grunnable", "_Grunning", "cas", False)}),
    ("g", "G-direct-cas", {("_Gpreempted", "_Gwaiting", "cas", False)}),
    # a guard on a read of the same object (switch gp.atomicstatus.Load())
    ("g", "G-store-guard", {("_Grunning", "_Gdead", "guard", False)}),
    ("g", "G-store-unstated", {("*", "_Gdead", "unstated", False)}),
    # CAS operands that are fields of a receiver its constructor checked
    ("g", "G-constructor", {("_Gscansyscall", "_Gsyscall", "constructor", False)}),
    ("p", "P-cas", {("_Prunning", "_Pidle", "cas", False)}),
    ("p", "P-cas-guarded-var", {("_Pgcstop", "_Pidle", "cas", False)}),
    ("p", "P-guard", {("_Pidle", "_Prunning", "guard", False)}),
    ("p", "P-callee", {("_Pidle", "_Prunning", "callee", True)}),
    ("p", "P-world-stopped", {("_Pgcstop", "_Pdead", "world-stopped", False)}),
    ("p", "P-unstated-init", {("*", "_Pgcstop", "unstated", False)}),
    ("p", "P-unstated-first", {("*", "_Pidle", "unstated", False)}),
    ("p", "P-earlier-write", {("_Pidle", "_Pgcstop", "earlier-write", False)}),
    ("p", "P-constructor", {("_Prunning", "_Pidle", "constructor", False)}),
    ("p", "P-constructor-unchecked", {("*", "_Pgcstop", "unstated", False)}),
    ("p", "P-unstated-release", {("*", "_Pidle", "unstated", False)}),
    ("p", "P-callee-result", {("_Pidle", "_Pgcstop", "callee-result", False)}),
    ("p", "P-callee-result-moved", {("*", "_Pgcstop", "unstated", False)}),
]


@pytest.mark.parametrize(("machine", "marker", "want"), CASES, ids=[c[1] for c in CASES])
def test_rule(prior_facts, machine, marker, want):
    assert at(prior_facts, machine, marker) == want


def test_world_stopped_is_not_inherited_by_callees(prior_facts):
    # procresize asserts the world is stopped and calls initP; initP's store is on a fresh P.
    bp = states.blueprint(prior_facts, "p")
    calls = {(t.src, t.dst, t.prior) for t in bp.transitions if t.function == "procresize"}
    assert calls == {("*", "_Pgcstop", "unstated")}


def test_every_rule_is_exercised(prior_facts):
    used = {t.prior for m in "gp" for t in states.blueprint(prior_facts, m).transitions}
    assert used == set(states.PRIOR_RULES)


def test_constructor_facts_come_from_literals(prior_facts):
    lits = {(lit["type"], lit["func"]): lit for lit in prior_facts["literals"]}
    assert lits[("syscalling", "blockOnSyscall")]["fields"] == {"pp": "pp"}
    assert lits[("syscalling", "blockOnSyscall")]["guards"]["pp.status"]["in"] == [{"c": "_Prunning", "v": 1}]
    assert ("loose", "looseAny") in lits and "guards" not in lits[("loose", "looseAny")]
