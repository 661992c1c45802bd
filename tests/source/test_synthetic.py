"""Each status-writing mechanism on a small synthetic runtime whose transitions are known by reading it."""

from __future__ import annotations

from pathlib import Path

import pytest

from goblueprint.source import calls, states

pytestmark = pytest.mark.slow  # builds the Go helper on a cold cache

STATUS_GO = Path(__file__).resolve().parent / "testdata" / "synthroot" / "src" / "runtime" / "status.go"


def line_of(text: str) -> int:
    """Line of the only source line containing TEXT, so expectations follow edits of status.go."""
    hits = [i for i, ln in enumerate(STATUS_GO.read_text().splitlines(), 1) if text in ln]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def records(facts, machine):
    return {
        (t.src, t.dst, t.function, t.line, t.mechanism, t.context, t.indirect)
        for t in states.blueprint(facts, machine).transitions
    }


def test_states_come_from_the_anchor_const_block(synth_facts):
    bp = states.blueprint(synth_facts, "g")
    assert [s.name for s in bp.states] == [
        "_Gidle", "_Grunnable", "_Grunning", "_Gwaiting", "_Gdead",
        "_Gscan", "_Gscanrunnable", "_Gscanrunning", "_Gscanwaiting",
    ]  # fmt: skip
    assert {s.name: s.value for s in bp.states}["_Gscanwaiting"] == 0x1003
    assert bp.states[0].comment == "_Gidle: just allocated."
    assert [s.name for s in states.blueprint(synth_facts, "p").states] == [
        "_Pidle",
        "_Prunning",
        "_Pgcstop",
        "_Pdead",
    ]


def test_g_transitions(synth_facts):
    got = records(synth_facts, "g")
    want = {
        # constants through the casgstatus wrapper
        ("_Gidle", "_Gdead", "newg", line_of("casgstatus(gp, _Gidle, _Gdead)"), "casgstatus", None, False),
        ("_Grunning", "_Gdead", "goexit0", line_of("casgstatus(gp, _Grunning, _Gdead)"), "casgstatus", None, False),
        # a variable with two possible values: one record per value
        ("_Gdead", "_Grunnable", "newg", line_of("casgstatus(gp, _Gdead, status)"), "casgstatus", None, False),
        ("_Gdead", "_Gwaiting", "newg", line_of("casgstatus(gp, _Gdead, status)"), "casgstatus", None, False),
        # wrapper of a wrapper, inside a systemstack closure
        ("_Grunning", "_Gwaiting", "park", line_of("casGToWaiting(gp, _Grunning)"), "casGToWaiting", "systemstack",
         False),
        # s in {_Grunnable, _Grunning} by the switch; castogscanstatus's own switch rejects _Grunning
        ("_Grunnable", "_Gscanrunnable", "scan", line_of("castogscanstatus(gp, s, s|_Gscan)"), "castogscanstatus",
         None, False),
        # a plain store: prior status not stated
        ("*", "_Gdead", "unknownPrior", line_of("gp.atomicstatus.Store(_Gdead)"), "atomicstatus.Store", None, False),
        # constants a throw-guard pins to the parameters: the caller's call is the record
        ("_Grunning", "_Gscanrunnable", "preemptPark", line_of("casGToPreemptScan(gp, _Grunning, _Gscanrunnable)"),
         "casGToPreemptScan", None, False),
        # s is a parameter nobody calls: the default clause only says s != _Gdead, so `to` is unknown
        ("_Gwaiting", "*", "defaultCase", line_of("castogscanstatus(gp, _Gwaiting, s)"), "castogscanstatus", None,
         False),
        # a parameter nobody calls with a constant: unknown prior status
        ("*", "_Grunnable", "unknownPrior", line_of("casgstatus(gp, s, _Grunnable)"), "casgstatus", None, False),
    }  # fmt: skip
    assert got == want


def test_p_transitions(synth_facts):
    got = records(synth_facts, "p")
    want = {
        # the guard `pp.status != _Pidle -> throw` proves the prior status of a plain store
        ("_Pidle", "_Prunning", "wirep", line_of("pp.status = _Prunning"), "assignment", None, False),
        ("*", "_Pgcstop", "stopP", line_of("pp.status = _Pgcstop"), "assignment", None, False),
        ("_Prunning", "_Pidle", "handoff", line_of("atomic.Cas(&pp.status, _Prunning, _Pidle)"), "atomic.Cas", None, False),
        ("*", "_Pdead", "destroy", line_of("atomic.Store(&pp.status, _Pdead)"), "atomic.Store", None, False),
        # s := pp.status is unknown, but `s == _Prunning &&` holds where the CAS runs
        ("_Prunning", "_Pidle", "retakeLike", line_of("if s == _Prunning && atomic.Cas"), "atomic.Cas", None, False),
        # wrappers: acquirep always calls wirep, so its callers transition too
        ("_Pidle", "_Prunning", "acquirep", line_of("\twirep(pp)"), "wirep", None, True),
        ("_Pidle", "_Prunning", "startSometimes", _acquirep_line("startSometimes"), "acquirep", None, True),
        ("_Pidle", "_Prunning", "user", _acquirep_line("user"), "acquirep", None, True),
    }  # fmt: skip
    assert got == want
    # startSometimes may return before acquiring, so calling it is not a transition.
    assert not any(r[4] == "startSometimes" for r in got)


def _acquirep_line(func: str) -> int:
    lines = STATUS_GO.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"func {func}("))
    return next(i for i in range(start, len(lines)) if "acquirep(pp)" in lines[i]) + 1


def test_call_graph_kinds(synth_facts):
    g = calls.CallGraph(synth_facts)
    kinds = {(e.callee, e.kind) for e in g.callees("park")}
    assert ("casGToWaiting", "systemstack") in kinds  # call inside a closure passed to systemstack
    assert ("park_m", "mcall") in kinds  # function value passed to mcall
    assert {(e.callee, e.kind) for e in g.callees("park_m")} == {("helper", "go"), ("cleanup", "defer"),
                                                                  ("schedule", "call")}  # fmt: skip
    assert [(e.callee, e.kind, e.file) for e in g.callees("goexit")] == [
        ("goexit1", "asm", "src/runtime/asm_amd64.s")
    ]
    assert [(e.callee, e.kind) for e in g.callees("mcallish")] == [("schedule", "asm")]
    assert g.resolve("runtime.park") == "park" and g.resolve("runtime.goexit0") == "goexit0"
    path = g.paths("goexit", "casgstatus")[0]
    assert [(e.caller, e.callee, e.kind) for e in path] == [
        ("goexit", "goexit1", "asm"), ("goexit1", "goexit0", "mcall"), ("goexit0", "casgstatus", "call"),
    ]  # fmt: skip


def test_directives_and_structs(synth_facts):
    funcs = {f["name"]: f for f in synth_facts["funcs"]}
    assert funcs["casgstatus"]["directives"] == ["go:nosplit"]
    assert funcs["casGToWaiting"]["directives"] == []
    structs = {s["name"]: s for s in synth_facts["structs"]}
    assert [(f["name"], f["type"], f["comment"]) for f in structs["p"]["fields"]] == [
        ("status", "uint32", "one of _Pidle, ..."), ("m", "*m", ""),
    ]  # fmt: skip
    assert synth_facts["type_errors"] == [] and synth_facts["parse_errors"] == []


def test_generic_method_and_new_expr(synth_facts):
    """modern.go: a generic method (Go 1.27) and new(expr) (Go 1.26) parse, type-check and resolve."""
    assert synth_facts["type_errors"] == [] and synth_facts["parse_errors"] == []
    g = calls.CallGraph(synth_facts)
    assert {(e.callee, e.kind) for e in g.callees("callGeneric")} == {
        ("(*box).get", "call"),
        ("useNew", "call"),
    }
