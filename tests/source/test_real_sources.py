"""Facts about the real runtime of two releases, each checked by reading the source.

Where the Go source states it (case lists, call sites), the expectation is read
from the file at test time, so that the test checks the analysis, not a copy of it.
"""

from __future__ import annotations

import re

import pytest

from goblueprint.source import calls, states

pytestmark = pytest.mark.slow

RELEASES = ("1.27", "1.22")


def goroot_of(facts):
    from goblueprint import toolchain

    return toolchain.find(facts["go_version"]).goroot


def src_line(facts, rel, line):
    return (goroot_of(facts) / rel).read_text().splitlines()[line - 1]


@pytest.mark.parametrize("release", RELEASES)
def test_parses_and_typechecks_cleanly(real_facts, release):
    f = real_facts(release)
    assert f["parse_errors"] == []
    assert f["type_errors"] == []
    assert "src/runtime/proc.go" in f["files"]


def test_states_added_and_removed_in_126(real_facts):
    new = states.blueprint(real_facts("1.27"), "g").state_names()
    old = states.blueprint(real_facts("1.22"), "g").state_names()
    assert {"_Gleaked", "_Gdeadextra", "_Gscanleaked", "_Gscandeadextra"} <= new - old
    assert "_Psyscall" not in states.blueprint(real_facts("1.27"), "p").state_names()
    assert "_Psyscall" in states.blueprint(real_facts("1.22"), "p").state_names()


def test_psyscall_removed_exactly_in_126(real_facts):
    """Go 1.26 removed _Psyscall and added _Gleaked and _Gdeadextra (1.25 has the old sets)."""
    g25, g26 = (states.blueprint(real_facts(v), "g").state_names() for v in ("1.25", "1.26"))
    p25, p26 = (states.blueprint(real_facts(v), "p").state_names() for v in ("1.25", "1.26"))
    assert g26 - g25 == {"_Gleaked", "_Gdeadextra", "_Gscanleaked", "_Gscandeadextra"}
    assert p25 - p26 == {"_Psyscall"}
    # Transitions into _Psyscall exist in 1.25 (reentersyscall's store) and in no later release.
    assert any(t.dst == "_Psyscall" for t in states.blueprint(real_facts("1.25"), "p").transitions)


@pytest.mark.parametrize("release", RELEASES)
def test_newproc1_does_not_enqueue(real_facts, release):
    g = calls.CallGraph(real_facts(release))
    assert "runqput" not in {e.callee for e in g.callees("newproc1")}
    into_runq = {(e.callee, e.kind) for e in g.callees("newproc")}
    assert ("runqput", "systemstack") in into_runq
    assert ("newproc1", "systemstack") in into_runq
    bp = states.blueprint(real_facts(release), "g")
    pairs = {(t.src, t.dst) for t in bp.transitions if t.function == "newproc1"}
    assert {("_Gidle", "_Gdead"), ("_Gdead", "_Grunnable")} <= pairs
    assert not [t for t in bp.transitions if t.function == "newproc"]


@pytest.mark.parametrize("release", RELEASES)
def test_pdead_only_in_p_destroy(real_facts, release):
    bp = states.blueprint(real_facts(release), "p")
    to_dead = [t for t in bp.transitions if t.dst == "_Pdead"]
    assert {t.function for t in to_dead if not t.indirect} == {"(*p).destroy"}
    assert {t.mechanism for t in to_dead if t.indirect} <= {"(*p).destroy"}


@pytest.mark.parametrize("release", RELEASES)
def test_guards_prove_prior_p_status(real_facts, release):
    bp = states.blueprint(real_facts(release), "p")
    direct = {(t.function, t.src, t.dst) for t in bp.transitions if not t.indirect}
    assert ("wirep", "_Pidle", "_Prunning") in direct  # if pp.m != 0 || pp.status != _Pidle { throw }
    assert ("releasepNoTrace", "_Prunning", "_Pidle") in direct  # ... || pp.status != _Prunning { throw }
    indirect = {(t.function, t.mechanism, t.src, t.dst) for t in bp.transitions if t.indirect}
    assert ("releasep", "releasepNoTrace", "_Prunning", "_Pidle") in indirect


def test_syscalling_thread_wrappers_127(real_facts):
    bp = states.blueprint(real_facts("1.27"), "p")
    got = {(t.function, t.mechanism, t.dst, t.indirect) for t in bp.transitions}
    assert ("(syscallingThread).gcstopP", "(syscallingThread).releaseP", "_Pgcstop", False) in got
    assert ("(syscallingThread).takeP", "(syscallingThread).releaseP", "_Pidle", False) in got
    assert any(f == "retake" and m == "(syscallingThread).takeP" and ind for f, m, _, ind in got)


@pytest.mark.parametrize("release", RELEASES)
def test_guard_pinned_wrappers(real_facts, release):
    """casGToPreemptScan/casGFromPreempted throw unless old/new are given constants, then CAS those:
    their callers' sites are the records, with the wrapper as mechanism."""
    bp = states.blueprint(real_facts(release), "g")
    got = {(t.function, t.mechanism, t.src, t.dst) for t in bp.transitions}
    assert ("preemptPark", "casGToPreemptScan", "_Grunning", "_Gscanpreempted") in got
    assert ("suspendG", "casGFromPreempted", "_Gpreempted", "_Gwaiting") in got
    assert not [t for t in bp.transitions if t.function in ("casGToPreemptScan", "casGFromPreempted")]


@pytest.mark.parametrize("release", RELEASES)
def test_suspendg_scan_cas_one_record_per_case(real_facts, release):
    f = real_facts(release)
    text = (goroot_of(f) / "src/runtime/preempt.go").read_text().splitlines()
    cas_line = next(i for i, ln in enumerate(text, 1) if "castogscanstatus(gp, s, s|_Gscan)" in ln)
    case_line = next(ln for ln in reversed(text[: cas_line - 1]) if ln.strip().startswith("case "))
    cases = set(re.findall(r"_G\w+", case_line))
    bp = states.blueprint(f, "g")
    got = {
        (t.src, t.dst) for t in bp.transitions if t.line == cas_line and t.file == "src/runtime/preempt.go"
    }
    assert got == {(c, "_Gscan" + c.removeprefix("_G")) for c in cases}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("machine", ["g", "p"])
def test_every_evidence_line_performs_the_write(real_facts, release, machine):
    f = real_facts(release)
    bp = states.blueprint(f, machine)
    assert bp.transitions
    for t in bp.transitions:
        text = src_line(f, t.file, t.line)
        if t.mechanism == "assignment":
            assert re.search(r"\.status\s*=", text), (t, text)
        elif "." in t.mechanism and not t.mechanism.startswith("("):  # atomic.Cas, atomicstatus.Store
            assert t.mechanism.split(".")[-1] in text, (t, text)
        else:  # a wrapper or a function that always transitions: its call is on the line
            assert re.search(re.escape(t.mechanism.split(".")[-1]) + r"(\[[^\]]*\])?\(", text), (t, text)
        assert t.context in (None, "systemstack", "mcall")


@pytest.mark.parametrize("release", RELEASES)
def test_asm_edges(real_facts, release):
    g = calls.CallGraph(real_facts(release))
    assert ("goexit1", "asm") in {(e.callee, e.kind) for e in g.callees("goexit")}
    path = g.paths("goexit", "schedule")[0]
    assert [(e.callee, e.kind) for e in path] == [
        ("goexit1", "asm"),
        ("goexit0", "mcall"),
        ("schedule", "call"),
    ]
