"""Prior-status rules and verdicts on real releases (1.22, 1.25, 1.26, 1.27).

The drawings are docs/example-p.mmd (the P life cycle of blog posts) and docs/example-g.mmd;
expectations were established by reading the runtime source of each release.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goblueprint.cli import main
from goblueprint.source import diagram, history, states, tables, verify
from goblueprint.source.calls import CallGraph

pytestmark = pytest.mark.slow

DOCS = Path(__file__).resolve().parents[2] / "docs"
NEW, OLD = ("1.26", "1.27"), ("1.22", "1.25")


def judge(facts, name: str, machine: str) -> dict[int, dict]:
    edges = diagram.parse((DOCS / name).read_text(), name)
    bp = states.blueprint(facts, machine)
    result = verify.verify(edges, bp, CallGraph(facts), tables.MACHINES[machine].prefix)
    return {e["line"]: e for e in result["edges"]}


@pytest.mark.parametrize("release", NEW + OLD)
def test_blog_p_diagram(real_facts, release):
    got = judge(real_facts(release), "example-p.mmd", "p")
    assert got[5]["verdict"] == "confirmed"  # _Pidle -> _Prunning (acquirep -> wirep's guard)
    assert got[6]["verdict"] == "confirmed"  # _Prunning -> _Pidle (releasep)
    # (*p).destroy runs with the world stopped, on Ps in _Pgcstop: _Pidle -> _Pdead is false everywhere.
    assert got[9]["verdict"] == "refuted"
    assert "_Pgcstop" in got[9]["nearest_path"]
    if release in NEW:
        # _Psyscall left in Go 1.26: both edges through it are refuted, naming that release.
        for line in (7, 8):
            assert got[line]["verdict"] == "refuted", got[line]
            assert got[line]["removed"][0]["removed_in"] == "1.26"
            assert "removed in Go 1.26" in got[line]["reason"]
    else:
        # reentersyscall stores _Psyscall without stating the prior status: unknown, not confirmed.
        assert got[7]["verdict"] == "unknown"
        assert {e["from"] for e in got[7]["evidence"]} == {"*"}
        # exitsyscall CASes _Psyscall -> _Pidle, then acquires: no code moves _Psyscall -> _Prunning.
        assert got[8]["verdict"] == "refuted"
        assert got[8]["nearest_path"][0] == "_Psyscall" and len(got[8]["nearest_path"]) == 3


@pytest.mark.parametrize("release", ["1.27", "1.22"])
def test_common_g_diagram(real_facts, release):
    got = judge(real_facts(release), "example-g.mmd", "g")
    refuted = {line for line, e in got.items() if e["verdict"] == "refuted"}
    # _Gidle -> _Grunnable, _Gwaiting -> _Gpreempted; 1.22 still has exitsyscall0's _Gsyscall -> _Grunnable.
    assert refuted == ({4, 11, 14} if release == "1.27" else {4, 14})
    assert got[17]["verdict"] == "unknown"  # "stolen by another P" is no status of any release
    assert all(got[line]["prior_rules"] == ["cas"] for line in got if got[line]["verdict"] == "confirmed")


def test_p_machine_of_127_rules(real_facts):
    f = real_facts("1.27")
    bp = states.blueprint(f, "p")
    direct = [t for t in bp.transitions if not t.indirect]
    by_func = {(t.function, t.src, t.dst): t.prior for t in direct}
    assert by_func[("(*p).destroy", "_Pgcstop", "_Pdead")] == "world-stopped"
    assert by_func[("(syscallingThread).gcstopP", "_Prunning", "_Pgcstop")] == "constructor"
    assert by_func[("(syscallingThread).takeP", "_Prunning", "_Pidle")] == "constructor"
    assert {t.prior for t in direct if t.function == "procresize"} == {"world-stopped"}
    # gcstopm: pp := releasep(); ...; pp.status = _Pgcstop, and releasep leaves its P in _Pidle.
    assert by_func[("gcstopm", "_Pidle", "_Pgcstop")] == "callee-result"
    # What is left with "*" is decided by no rule: read from the facts, not through states' own code.
    asserting = {
        fn["name"] for fn in f["funcs"]
        if any(c["callee"] in tables.WORLD_STOPPED_ASSERTIONS and c.get("top") for c in fn["calls"])
    }  # fmt: skip
    sites = {(s["func"], s["line"]): s for s in f["sites"] if s["field"] == "p.status"}
    checked = {lit["type"] for lit in f["literals"] if lit.get("guards")}
    left = [t for t in direct if t.src == states.WILDCARD]
    assert left
    for t in left:
        site = sites[(t.function, t.line)]
        assert t.function not in asserting
        # no method of a receiver type that some constructor built after a check
        assert t.function.strip("(*").split(")")[0] not in checked
        assert site["subj"] not in (site.get("guards") or {})
        # no store through `pp := f()` where f returns an object it wrote a status to
        assert not any(
            fn["name"] in (site.get("obj") or {}).get("from", []) and fn.get("ret") for fn in f["funcs"]
        )


@pytest.mark.parametrize("release", NEW + OLD)
def test_g_machine_has_no_wildcard(real_facts, release):
    # 1.26 and 1.27's (syscallingThread).resume restores s.status, which setBlockOnExitSyscall checked.
    bp = states.blueprint(real_facts(release), "g")
    assert [t for t in bp.transitions if states.WILDCARD in (t.src, t.dst)] == []
    if release in NEW:
        resume = {
            (t.src, t.dst, t.prior) for t in bp.transitions if t.function == "(syscallingThread).resume"
        }
        assert resume == {
            ("_Gscansyscall", "_Gsyscall", "constructor"),
            ("_Gscandeadextra", "_Gdeadextra", "constructor"),
        }


def test_shipped_history_agrees_with_the_diff_machinery(real_facts):
    rebuilt = history.build([(v, real_facts(v)) for v in ("1.22", "1.25", "1.26", "1.27")])
    shipped = history.shipped()
    for machine, gone in rebuilt["machines"].items():
        for name, entry in gone.items():
            assert shipped["machines"][machine][name] == entry
    assert rebuilt["machines"]["p"]["_Psyscall"] == {
        "last_seen": "1.25", "removed_in": "1.26", "became": "_Psyscall_unused"
    }  # fmt: skip
    assert history.removal("p", "_Psyscall", "1.25.5") is None


def test_cli_exit_statuses(real_facts, capsys, tmp_path):
    real_facts("1.27")
    diagram_path = str(DOCS / "example-p.mmd")
    assert main(["source", "verify", diagram_path, "--machine", "p", "--json"]) == 1
    json.loads(capsys.readouterr().out)
    good = tmp_path / "good.mmd"
    good.write_text("stateDiagram-v2\n  _Pgcstop --> _Pdead : destroy\n  _Pidle --> _Prunning : acquirep\n")
    assert main(["source", "verify", str(good), "--machine", "p"]) == 0
    out = capsys.readouterr().out
    assert "_Pgcstop -> _Pdead [destroy]: CONFIRMED" in out and "world-stopped" in out
    assert main(["source", "verify", str(tmp_path / "none.mmd"), "--machine", "p"]) == 2
