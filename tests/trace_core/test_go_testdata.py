"""Go's own reader tests, run through our Reader.

* ``testdata/tests/*.test``: hand-written traces with a SUCCESS/FAILURE expectation
  (Go's regexp over the reader's error); encoded to wire bytes by T2's textform.
* ``testdata/fuzz/FuzzReader/*``: the fuzzer's corpus of malformed traces.

Each is also compared, byte for byte and error for error, with `go tool trace -d=parsed`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goblueprint import toolchain
from goblueprint.errors import UnsupportedTraceVersion
from goblueprint.trace.reader import Reader
from goblueprint.trace.textform import go_unquote, parse_test_file

from .conftest import GO_TRACE_TESTDATA, our_parsed, same_error

_TESTDATA = toolchain.find("1.27").goroot / GO_TRACE_TESTDATA
GOLDEN = sorted((_TESTDATA / "tests").glob("*.test"))
FUZZ = sorted((_TESTDATA / "fuzz" / "FuzzReader").glob("*"))


def test_corpora_present():
    assert len(GOLDEN) >= 20 and len(FUZZ) >= 10


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_expectation(path: Path):
    test = parse_test_file(path.read_bytes())
    got = our_parsed(test.wire)
    assert test.matches(got.error), (
        f"expected failure={test.expect_failure} /{test.pattern}/, got {got.error!r}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_same_as_go(path: Path, go_parsed, tmp_path):
    wire = parse_test_file(path.read_bytes()).wire
    trace = tmp_path / "golden.trace"
    trace.write_bytes(wire)
    want = go_parsed(trace)
    got = our_parsed(wire)
    assert got.text == want.text
    assert same_error(got.error, want.error)


def fuzz_input(path: Path) -> bytes:
    # "go test fuzz v1" then one []byte("...") line with a Go string literal.
    lines = path.read_text().splitlines()
    assert lines[0] == "go test fuzz v1"
    lit = lines[1].strip()
    assert lit.startswith("[]byte(") and lit.endswith(")")
    return go_unquote(lit[len("[]byte(") : -1])


@pytest.mark.slow
@pytest.mark.parametrize("path", FUZZ, ids=lambda p: p.name)
def test_fuzz_corpus_same_as_go(path: Path, go_parsed, tmp_path):
    data = fuzz_input(path)
    trace = tmp_path / "fuzz.trace"
    trace.write_bytes(data)
    want = go_parsed(trace)
    if data.startswith((b"go 1.11 ", b"go 1.19 ", b"go 1.21 ")):
        # The pre-1.22 format: rejected on purpose (Go converts it), with a clear error.
        with pytest.raises(UnsupportedTraceVersion, match="format version not supported yet"):
            Reader(data)
        return
    got = our_parsed(data)
    assert got.text == want.text
    assert same_error(got.error, want.error)
