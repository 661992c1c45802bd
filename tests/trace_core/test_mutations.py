"""Seeded mutations of valid traces (bytes changed, dropped, inserted): whatever Go's
reader makes of them (events, then an error or a clean end), ours makes of them too.

This is how the bare-io.EOF end, the uint8 status truncation and Go's stack
formatting in duplicate-ID errors were found; the seeds are fixed so a failure
reproduces.
"""

from __future__ import annotations

import random

import pytest

from goblueprint.trace.textform import parse_test_file

from .conftest import our_parsed, same_error

pytestmark = pytest.mark.slow

GOLDEN = [
    "go122-annotations-stress",
    "go122-create-syscall-reuse-thread-id",
    "go122-syscall-steal-proc-ambiguous",
    "go123-sync",
    "go125-sync",
]
PER_TRACE = 40


def mutate(data: bytes, rng: random.Random) -> bytes:
    d = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 4])):
        pos = rng.randrange(16, len(d))  # keep the header: its errors have their own tests
        op = rng.random()
        if op < 0.6:
            d[pos] = rng.randrange(256)
        elif op < 0.8:
            del d[pos]
        else:
            d.insert(pos, rng.randrange(256))
    return bytes(d)


def _check(data: bytes, seed: int, go_parsed, tmp_path) -> int:
    rng = random.Random(seed)
    errors = 0
    for k in range(PER_TRACE):
        d = mutate(data, rng)
        path = tmp_path / f"m{k}.trace"
        path.write_bytes(d)
        want = go_parsed(path)
        got = our_parsed(d)
        assert got.text == want.text, f"mutation {k} (seed {seed})"
        assert same_error(got.error, want.error), f"mutation {k} (seed {seed})"
        errors += want.error is not None
    return errors


@pytest.mark.parametrize("name", GOLDEN)
def test_mutated_golden_traces(name, go_testdata, go_parsed, tmp_path):
    wire = parse_test_file((go_testdata / "tests" / f"{name}.test").read_bytes()).wire
    errors = _check(wire, seed=sum(map(ord, name)), go_parsed=go_parsed, tmp_path=tmp_path)
    assert errors > 0  # the mutations do reach the error paths


def test_mutated_real_trace(own_trace, go_parsed, tmp_path):
    data = own_trace("cpusample", "1.22").read_bytes()
    assert _check(data, seed=22, go_parsed=go_parsed, tmp_path=tmp_path) > 0
