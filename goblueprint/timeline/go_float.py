"""Go's ``math.Log`` and ``math.Exp`` as the amd64 toolchain computes them, bit for bit.

go tool trace's MMU plot picks its window sizes as ``time.Duration(math.Exp(...))`` over
``math.Log`` of the bounds.  On amd64 both are assembly (GOROOT/src/math/log_amd64.s and
exp_amd64.s), not the correctly rounded libm that Python's ``math`` calls: they are up to
an ulp away, and where ``Exp`` lands next to an integer the truncated window is 1 ns off
(and its MMU differs).  The ports below repeat each instruction's double operation in the
same order.  ``Exp`` has two paths in Go, chosen once per process by the CPU
(``useFMA = cpu.X86.HasAVX && cpu.X86.HasFMA``): the fused one rounds each multiply-add
once, so it gives other bits than the plain one; ``go_exp`` takes the path Go takes here.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from functools import cache

# log_amd64.s
_HSQRT2 = 7.07106781186547524401e-01
_LN2HI = 6.93147180369123816490e-01
_LN2LO = 1.90821492927058770002e-10
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01

# exp_amd64.s (Shibata's SLEEF exp, simplified)
_LOG2E = 1.4426950408889634073599246810018920
_LN2U = 0.69314718055966295651160180568695068359375
_LN2L = 0.28235290563031577122588448175013436025525412068e-12
_OVERFLOW = 7.09782712893384e02
# exprodata: the Taylor coefficients from the highest down, then 1/2, 1 and 2.
_TAYLOR = (2.4801587301587301587e-5, 1.9841269841269841270e-4, 1.3888888888888888889e-3,
           8.3333333333333333333e-3, 4.1666666666666666667e-2, 1.6666666666666666667e-1)  # fmt: skip


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _float(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits & (1 << 64) - 1))[0]


def _fma(a: float, b: float, c: float) -> float:
    """a*b+c rounded once (VFMADD): exact rationals, then Python's correctly rounded division."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c  # an infinity or NaN goes through as it would fused
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


def go_log(x: float) -> float:
    """math.Log on amd64 (archLog)."""
    bits = _bits(x)
    if bits & ~(1 << 63) == 0:
        return float("-inf")
    if bits >> 63:
        return float("nan")
    if bits >= 0x7FF0000000000000:
        return x  # +Inf or NaN
    # Frexp by bits: the fraction with the exponent of 0.5, the exponent less 0x3FE.
    f1 = _float((bits & 0x000FFFFFFFFFFFFF) | 0x3FE0000000000000)
    k = float(((bits >> 52) & 0x7FF) - 0x3FE)
    # CMPSD cmpnlt: k -= 1 and f1 *= 2 unless HSqrt2 < f1 (so also when they are equal).
    one = 0.0 if _HSQRT2 < f1 else 1.0
    k -= one
    f1 *= one + 1.0
    f = f1 - 1.0
    s = f / (2.0 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (((_L7 * s4 + _L5) * s4 + _L3) * s4 + _L1)
    t2 = s4 * ((_L6 * s4 + _L4) * s4 + _L2)
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2HI - ((hfsq - (s * (hfsq + r) + k * _LN2LO)) - f)


def _int32_nearest(x: float) -> int:
    """CVTSD2SL: to int32 by the default rounding (nearest, ties even); out of range (or NaN)
    gives the 'integer indefinite' 0x80000000."""
    if x != x or not -(2.0**31) - 0.5 < x < 2.0**31 - 0.5:
        return -(1 << 31)
    return round(x)


def go_exp_with(x: float, fma: bool) -> float:
    """math.Exp on amd64 (archExp), by its FMA path or its plain one."""
    bits = _bits(x)
    if bits & ~(1 << 63) >= 0x7FF0000000000000:  # not finite
        if bits == 0xFFF0000000000000:
            return 0.0
        return x
    if x > _OVERFLOW:
        return float("inf")
    exponent = _int32_nearest(_LOG2E * x)
    k = float(exponent)
    if fma:
        x = _fma(-_LN2U, k, x)
        x = _fma(-_LN2L, k, x)
    else:
        x -= _LN2U * k
        x -= _LN2L * k
    x *= 0.0625  # reduce the argument: exp(x) = exp(x/16)**16, by four squarings below
    p = _TAYLOR[0]
    for c in (*_TAYLOR[1:], 0.5, 1.0):
        p = _fma(p, x, c) if fma else p * x + c
    x = p * x  # expm1 of the reduced argument
    for _ in range(3):
        x = x * (x + 2.0)  # expm1(2y) = expm1(y) * (expm1(y) + 2)
    x = _fma(x, x + 2.0, 1.0) if fma else x * (x + 2.0) + 1.0
    # Times 2**exponent, with the exponent field built in a register.
    biased = exponent + 0x3FF
    if biased <= 0:
        if biased < -52:
            return 0.0
        x *= _float((biased + 0x3FE) << 52)
        biased = 1
    elif biased >= 0x7FF:
        return float("inf")
    return x * _float(biased << 52)


@cache
def _go_uses_fma() -> bool:
    """Go's useFMA: the CPU has AVX (with the OS saving its registers, which Linux reports by
    listing the flag) and FMA.  Not x86-64, or no flags to read: the plain path."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return "avx" in flags and "fma" in flags
    except OSError:
        pass
    return False


def go_exp(x: float) -> float:
    """math.Exp as Go computes it on this machine's CPU (amd64's two paths)."""
    return go_exp_with(x, _go_uses_fma())
