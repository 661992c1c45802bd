"""go_float's Log and Exp against Go's own math.Log and math.Exp, bit for bit, on both of
amd64 Exp's paths (the FMA one where this CPU has it, and the plain one Go takes with
GODEBUG=cpu.fma=off)."""

from __future__ import annotations

import math
import os
import platform
import random
import struct
import subprocess
from pathlib import Path

import pytest

from goblueprint.timeline import go_float

pytestmark = pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"), reason="go_float ports Go's amd64 assembly"
)


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _float(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _inputs() -> list[float]:
    """What the MMU plot feeds them (logs of window bounds, exponents up to log(2**63)), the
    whole double range, and the special and boundary cases of both."""
    rng = random.Random(7)
    xs = [float(rng.randint(1, 10**13)) for _ in range(1000)]
    xs += [rng.uniform(0, 44) for _ in range(1000)]
    xs += [rng.uniform(-760, 720) for _ in range(500)]
    xs += [_float(rng.getrandbits(64)) for _ in range(500)]
    xs += [0.0, -0.0, math.inf, -math.inf, math.nan, -1.0, 5e-324, 1e-310, 1.0, 2.0, 1e9, 1e15,
           709.78, 709.79, -708.5, -740.0, -745.2, -1e300, 1e300, 102349249.0]  # fmt: skip
    # Fractions exactly at Log's sqrt(2)/2 threshold, which its assembly scales (Go's log.go not).
    xs += [math.ldexp(go_float._HSQRT2, n) for n in range(-64, 65)]
    return xs


def _go(xs: list[float], env: dict[str, str]) -> list[tuple[float, float]]:
    from tests.conftest import build_goprog

    binary = build_goprog("gomath", "1.27", prog_root=Path(__file__).parent)
    lines = "".join(f"{_bits(x):x}\n" for x in xs)
    out = subprocess.run([str(binary)], input=lines, capture_output=True, text=True, check=True,
                         env={**os.environ, **env}).stdout.split()  # fmt: skip
    return [(_float(int(e, 16)), _float(int(lg, 16))) for e, lg in zip(out[::2], out[1::2], strict=True)]


def _same(a: float, b: float) -> bool:
    return _bits(a) == _bits(b) or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("fma", [True, False])
def test_log_and_exp_are_gos_to_the_bit(fma: bool) -> None:
    if fma and not go_float._go_uses_fma():
        pytest.skip("this CPU has no FMA: Go takes the plain path only")
    xs = _inputs()
    want = _go(xs, {} if fma else {"GODEBUG": "cpu.fma=off"})
    assert [x for x, (e, _) in zip(xs, want, strict=True) if not _same(go_float.go_exp_with(x, fma), e)] == []
    assert [x for x, (_, lg) in zip(xs, want, strict=True) if not _same(go_float.go_log(x), lg)] == []
    # The comparison can tell: libm's correctly rounded functions are not Go's.
    assert any(not _same(math.exp(x), e) for x, (e, _) in zip(xs, want, strict=True) if 0 <= x < 44)
    assert any(not _same(math.log(x), lg) for x, (_, lg) in zip(xs, want, strict=True) if x > 0)


def test_exp_takes_the_path_go_takes_on_this_cpu() -> None:
    xs = _inputs()
    want = _go(xs, {})
    assert [x for x, (e, _) in zip(xs, want, strict=True) if not _same(go_float.go_exp(x), e)] == []
    # The two paths differ on these inputs, so taking the other one would show.
    assert any(not _same(go_float.go_exp_with(x, True), go_float.go_exp_with(x, False)) for x in xs)
