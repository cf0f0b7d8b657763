"""``Math.log`` and ``Math.exp`` as V8 computes them (fdlibm's ``e_log.c`` and
``e_exp.c`` algorithms, which V8's ``base/ieee754.cc`` ports).

They are not correctly rounded and can differ from Python's ``math`` by one ulp
(V8's ``Math.log(3)`` is 1.0986122886681096, a correctly rounded log gives
...098). The Clarity data's README: that decides one recorded score tie, so the
scorer uses these. Written from the published fdlibm algorithm (Sun Microsystems,
freely redistributable); the constants are fdlibm's.
"""

from __future__ import annotations

import math
import struct

__all__ = ["exp", "log"]

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_TWO54 = 1.80143985094819840000e16
_LG = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
)
_INVLN2 = 1.44269504088896338700e00
_P = (
    1.66666666666666019037e-01,
    -2.77777777770155933842e-03,
    6.61375632143793436117e-05,
    -1.65339022054652515390e-06,
    4.13813679705723846039e-08,
)
_O_THRESHOLD = 7.09782712893383973096e02
_U_THRESHOLD = -7.45133219101941108420e02
_TWOM1000 = 9.33263618503218878990e-302


def _words(x: float) -> tuple[int, int]:
    bits = struct.unpack("<q", struct.pack("<d", x))[0]
    high = (bits >> 32) & 0xFFFFFFFF
    if high >= 0x80000000:
        high -= 1 << 32  # a signed 32-bit word, as fdlibm reads it
    return high, bits & 0xFFFFFFFF


def _with_high(x: float, high: int) -> float:
    low = _words(x)[1]
    bits = ((high & 0xFFFFFFFF) << 32) | low
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def log(x: float) -> float:
    """fdlibm ``__ieee754_log``."""
    hx, lx = _words(x)
    k = 0
    if hx < 0x00100000:
        if ((hx & 0x7FFFFFFF) | lx) == 0:
            return -math.inf
        if hx < 0:
            return math.nan
        k -= 54
        x *= _TWO54
        hx = _words(x)[0]
    if hx >= 0x7FF00000:
        return x + x
    k += (hx >> 20) - 1023
    hx &= 0x000FFFFF
    i = (hx + 0x95F64) & 0x100000
    x = _with_high(x, hx | (i ^ 0x3FF00000))
    k += i >> 20
    f = x - 1.0
    dk = float(k)
    if (0x000FFFFF & (2 + hx)) < 3:
        if f == 0.0:
            return 0.0 if k == 0 else dk * _LN2_HI + dk * _LN2_LO
        r = f * f * (0.5 - 0.33333333333333333 * f)
        return f - r if k == 0 else dk * _LN2_HI - ((r - dk * _LN2_LO) - f)
    s = f / (2.0 + f)
    z = s * s
    i = hx - 0x6147A
    w = z * z
    j = 0x6B851 - hx
    lg1, lg2, lg3, lg4, lg5, lg6, lg7 = _LG
    t1 = w * (lg2 + w * (lg4 + w * lg6))
    t2 = z * (lg1 + w * (lg3 + w * (lg5 + w * lg7)))
    i |= j
    r = t2 + t1
    if i > 0:
        hfsq = 0.5 * f * f
        if k == 0:
            return f - (hfsq - s * (hfsq + r))
        return dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f)
    if k == 0:
        return f - s * (f - r)
    return dk * _LN2_HI - ((s * (f - r) - dk * _LN2_LO) - f)


def exp(x: float) -> float:
    """fdlibm ``__ieee754_exp``."""
    hx = _words(x)[0]
    negative = hx < 0
    hx &= 0x7FFFFFFF
    if hx >= 0x40862E42:
        if math.isnan(x):
            return x
        if math.isinf(x):
            return 0.0 if negative else x
        if x > _O_THRESHOLD:
            return math.inf
        if x < _U_THRESHOLD:
            return 0.0
    k = 0
    hi = lo = 0.0
    if hx > 0x3FD62E42:
        if hx < 0x3FF0A2B2:
            hi = x + _LN2_HI if negative else x - _LN2_HI
            lo = -_LN2_LO if negative else _LN2_LO
            k = -1 if negative else 1
        else:
            k = int(_INVLN2 * x + (-0.5 if negative else 0.5))
            t = float(k)
            hi = x - t * _LN2_HI
            lo = t * _LN2_LO
        x = hi - lo
    elif hx < 0x3E300000:
        return 1.0 + x
    t = x * x
    p1, p2, p3, p4, p5 = _P
    c = x - t * (p1 + t * (p2 + t * (p3 + t * (p4 + t * p5))))
    if k == 0:
        return 1.0 - ((x * c) / (c - 2.0) - x)
    y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi)
    if k >= -1021:
        return math.ldexp(y, k)
    return math.ldexp(y, k + 1000) * _TWOM1000
