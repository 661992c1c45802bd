"""The Mermaid reader: flowchart and stateDiagram syntax, errors with line numbers, and round trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goblueprint.errors import SourceError
from goblueprint.source import diagram, render_statemachine
from goblueprint.source.states import Blueprint, State, Transition


def edges(text):
    return [(e.src, e.dst, e.label, e.line) for e in diagram.parse(text)]


def test_flowchart_forms():
    text = "\n".join([
        "flowchart TD",
        "  A[_Gidle] -->|newproc| B(_Grunnable)",
        "  B -- execute --> C{{_Grunning}}",
        "  C ==> D((\"_Gwaiting\")); D -.-> B",
        "  E --> F --> G",
        "  style A fill:#fff",
        "  subgraph x",
        "  end",
    ])  # fmt: skip
    assert edges(text) == [
        ("_Gidle", "_Grunnable", "newproc", 2),
        ("_Grunnable", "_Grunning", "execute", 3),
        ("_Grunning", "_Gwaiting", None, 4),
        ("_Gwaiting", "_Grunnable", None, 4),
        ("E", "F", None, 5),
        ("F", "G", None, 5),
    ]


def test_front_matter_and_init_directives_are_skipped():
    text = "---\ntitle: G states\n---\n%%{init: {'theme': 'dark'}}%%\ngraph TD\n  A[_Gidle] --> B[_Gdead]\n"
    assert edges(text) == [("_Gidle", "_Gdead", None, 6)]


def test_state_diagram_forms():
    text = 'stateDiagram-v2\n  [*] --> _Gidle\n  _Gidle --> _Gdead : newproc1\n  state "running" as R\n  _Gdead --> R'
    got = diagram.parse(text)
    assert [(e.src, e.dst, e.label, e.line) for e in got] == [
        ("_Gidle", "_Gdead", "newproc1", 3), ("_Gdead", "running", None, 5),
    ]  # fmt: skip
    assert got[1].dst_id == "R"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("graph LR\n  A --> B\n  A -->> ??? B\n", 3),
        ("flowchart LR\n\n  A[x] -->|y| \n", 3),
        ("not a diagram\n", 1),
        ("", 1),
        ("stateDiagram-v2\n  A --> B\n  A => B\n", 3),
    ],
)
def test_malformed_diagram_names_its_line(text, line):
    with pytest.raises(SourceError, match=rf"d\.mmd:{line}: "):
        diagram.parse(text, "d.mmd")


_names = st.sampled_from(["_Gidle", "_Grunnable", "_Grunning", "_Gwaiting", "_Gdead", "*"])
_funcs = st.lists(
    st.sampled_from(["newproc1", "(*p).init", "execute", "park_m", "goexit0"]), min_size=1, max_size=4
)


@given(st.lists(st.tuples(_names, _names.filter(lambda n: n != "*"), _funcs), max_size=12))
def test_own_mermaid_reads_back(raw):
    """What `source states --format mermaid` writes, `source verify` reads as the same edges."""
    transitions = [
        Transition("f.go", i, s, d, fn, "assignment") for i, (s, d, fns) in enumerate(raw) for fn in fns
    ]
    states = [
        State(n, i, "") for i, n in enumerate(["_Gidle", "_Grunnable", "_Grunning", "_Gwaiting", "_Gdead"])
    ]
    bp = Blueprint("1.0", "g", states, transitions)
    parsed = diagram.parse(render_statemachine.mermaid(bp))
    got = {(e.src.split(" ")[0], e.dst) for e in parsed}
    assert got == {(s, d) for s, d, _ in raw}
    for e in parsed:
        want = sorted({fn for s, d, fns in raw if (s, d) == (e.src.split(" ")[0], e.dst) for fn in fns})
        assert e.label.split(", ")[0] == want[0]


_mermaid_bits = st.sampled_from(
    ["graph LR\n", "stateDiagram-v2\n", "A", "[_Gidle]", " --> ", "-->|x|", " -- y --> ", "(", ")", "{", "}",
     "|", ":", ";", "\n", "[*]", "state ", '"q"', " as ", "%%", "---\n", "==>", "-.->", " ", "note left of A\n"]
)  # fmt: skip


@given(st.lists(_mermaid_bits, max_size=30).map("".join))
def test_any_text_gives_edges_or_a_source_error(text):
    try:
        got = diagram.parse(text, "fuzz.mmd")
    except SourceError as exc:
        assert str(exc).startswith("fuzz.mmd:")
        return
    lines = text.splitlines()
    for e in got:
        assert 1 <= e.line <= len(lines)
