"""``Math.pow`` (and ``**``) as V8 computes it: fdlibm's ``e_pow.c`` algorithm,
which V8's ``base/ieee754.cc`` ports.

V8's pow is not correctly rounded and differs from the C library's (Python's
``**``) by one ulp on some arguments: ``Math.pow(0.5, 0.25)`` is
0.8408964152537146 where a correctly rounded pow gives 0.8408964152537145.
Reproducing Clarity's decisions bit for bit needs V8's value wherever a score
meets a threshold (SCORER.md, "Floating point"). ``Math.log`` and ``Math.exp`` are
in :mod:`packproof.packer.clarity2.v8math`.
"""

from __future__ import annotations

import math
import struct

__all__ = ["pow"]

_BP = (1.0, 1.5)
_DP_H = (0.0, 5.84962487220764160156e-01)
_DP_L = (0.0, 1.35003920212974897128e-08)
_TWO53 = 9007199254740992.0
_HUGE = 1.0e300
_TINY = 1.0e-300
_L1 = 5.99999999999994648725e-01
_L2 = 4.28571428578550184252e-01
_L3 = 3.33333329818377432918e-01
_L4 = 2.72728123808534006489e-01
_L5 = 2.30660745775561754067e-01
_L6 = 2.06975017800338417784e-01
_P1 = 1.66666666666666019037e-01
_P2 = -2.77777777770155933842e-03
_P3 = 6.61375632143793436117e-05
_P4 = -1.65339022054652515390e-06
_P5 = 4.13813679705723846039e-08
_LG2 = 6.93147180559945286227e-01
_LG2_H = 6.93147182464599609375e-01
_LG2_L = -1.90465429995776804525e-09
_OVT = 8.0085662595372944372e-17
_CP = 9.61796693925975554329e-01
_CP_H = 9.61796700954437255859e-01
_CP_L = -7.02846165095275826516e-09
_IVLN2 = 1.44269504088896338700e00
_IVLN2_H = 1.44269502162933349609e00
_IVLN2_L = 1.92596299112661746887e-08


def _words(x: float) -> tuple[int, int]:
    """The high word (signed 32-bit) and low word (unsigned) of a double."""
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    high = bits >> 32
    return (high - (1 << 32) if high >= 1 << 31 else high), bits & 0xFFFFFFFF


def _make(high: int, low: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", ((high & 0xFFFFFFFF) << 32) | low))[0])


def _zero_low(x: float) -> float:
    return _make(_words(x)[0], 0)


def pow(x: float, y: float) -> float:
    """fdlibm ``__ieee754_pow``: x ** y as V8's ``Math.pow`` computes it."""
    hx, lx = _words(x)
    hy, ly = _words(y)
    ix, iy = hx & 0x7FFFFFFF, hy & 0x7FFFFFFF
    if (iy | ly) == 0:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return math.nan
    # yisint: 0 not an integer, 1 odd, 2 even (only needed for x < 0)
    yisint = 0
    if hx < 0:
        if iy >= 0x43400000:
            yisint = 2
        elif iy >= 0x3FF00000:
            k = (iy >> 20) - 0x3FF
            if k > 20:
                j = ly >> (52 - k)
                if (j << (52 - k)) == ly:
                    yisint = 2 - (j & 1)
            elif ly == 0:
                j = iy >> (20 - k)
                if (j << (20 - k)) == iy:
                    yisint = 2 - (j & 1)
    if ly == 0:
        if iy == 0x7FF00000:  # y is +-inf
            if ((ix - 0x3FF00000) | lx) == 0:
                return math.nan  # V8: (+-1) ** +-inf is NaN
            if ix >= 0x3FF00000:
                return y if hy >= 0 else 0.0
            return -y if hy < 0 else 0.0
        if iy == 0x3FF00000:
            if hy >= 0:
                return x
            return math.copysign(math.inf, x) if x == 0 else 1.0 / x
        if hy == 0x40000000:
            return x * x
        if hy == 0x3FE00000 and hx >= 0:
            return math.sqrt(x)
    ax = abs(x)
    if lx == 0 and (ix == 0x7FF00000 or ix == 0 or ix == 0x3FF00000):
        z = ax
        if hy < 0:
            z = math.inf if z == 0 else 1.0 / z
        if hx < 0:
            if ((ix - 0x3FF00000) | yisint) == 0:
                return math.nan
            if yisint == 1:
                z = -z
        return z
    n = (hx >> 31) + 1  # 0 for x < 0, 1 otherwise
    if (n | yisint) == 0:
        return math.nan
    s = -1.0 if (n | (yisint - 1)) == 0 else 1.0
    if iy > 0x41E00000:  # |y| > 2**31
        if iy > 0x43F00000:
            if ix <= 0x3FEFFFFF:
                return math.inf if hy < 0 else 0.0
            if ix >= 0x3FF00000:
                return math.inf if hy > 0 else 0.0
        if ix < 0x3FEFFFFF:
            return s * math.inf if hy < 0 else s * 0.0
        if ix > 0x3FF00000:
            return s * math.inf if hy > 0 else s * 0.0
        t = ax - 1.0
        w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25))
        u = _IVLN2_H * t
        v = t * _IVLN2_L - w * _IVLN2
        t1 = _zero_low(u + v)
        t2 = v - (t1 - u)
    else:
        n = 0
        if ix < 0x00100000:
            ax *= _TWO53
            n -= 53
            ix = _words(ax)[0]
        n += (ix >> 20) - 0x3FF
        j = ix & 0x000FFFFF
        ix = j | 0x3FF00000
        if j <= 0x3988E:
            k = 0
        elif j < 0xBB67A:
            k = 1
        else:
            k = 0
            n += 1
            ix -= 0x00100000
        ax = _make(ix, _words(ax)[1])
        u = ax - _BP[k]
        v = 1.0 / (ax + _BP[k])
        ss = u * v
        s_h = _zero_low(ss)
        t_h = _make(((ix >> 1) | 0x20000000) + 0x00080000 + (k << 18), 0)
        t_l = ax - (t_h - _BP[k])
        s_l = v * ((u - s_h * t_h) - s_h * t_l)
        s2 = ss * ss
        r = s2 * s2 * (_L1 + s2 * (_L2 + s2 * (_L3 + s2 * (_L4 + s2 * (_L5 + s2 * _L6)))))
        r += s_l * (s_h + ss)
        s2 = s_h * s_h
        t_h = _zero_low(3.0 + s2 + r)
        t_l = r - ((t_h - 3.0) - s2)
        u = s_h * t_h
        v = s_l * t_h + t_l * ss
        p_h = _zero_low(u + v)
        p_l = v - (p_h - u)
        z_h = _CP_H * p_h
        z_l = _CP_L * p_h + p_l * _CP + _DP_L[k]
        t = float(n)
        t1 = _zero_low(((z_h + z_l) + _DP_H[k]) + t)
        t2 = z_l - (((t1 - t) - _DP_H[k]) - z_h)
    # (y1 + y2) * (t1 + t2)
    y1 = _zero_low(y)
    p_l = (y - y1) * t1 + y * t2
    p_h = y1 * t1
    z = p_l + p_h
    j, i = _words(z)
    overflow = j >= 0x40900000 and (((j - 0x40900000) | i) != 0 or p_l + _OVT > z - p_h)
    if overflow:  # z >= 1024
        return s * math.inf
    underflow = (
        j < 0x40900000
        and (j & 0x7FFFFFFF) >= 0x4090CC00
        and (((j - (0xC090CC00 - (1 << 32))) | i) != 0 or p_l <= z - p_h)
    )
    if underflow:  # z <= -1075
        return s * 0.0
    # 2 ** (p_h + p_l)
    i = j & 0x7FFFFFFF
    k = (i >> 20) - 0x3FF
    n = 0
    if i > 0x3FE00000:
        n = j + (0x00100000 >> (k + 1))
        k = ((n & 0x7FFFFFFF) >> 20) - 0x3FF
        t = _make(n & ~(0x000FFFFF >> k), 0)
        n = ((n & 0x000FFFFF) | 0x00100000) >> (20 - k)
        if j < 0:
            n = -n
        p_h -= t
    t = _zero_low(p_l + p_h)
    u = t * _LG2_H
    v = (p_l - (t - p_h)) * _LG2 + t * _LG2_L
    z = u + v
    w = v - (z - u)
    t = z * z
    t1 = z - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
    r = (z * t1) / (t1 - 2.0) - (w + z * w)
    z = 1.0 - (r - z)
    j = _words(z)[0] + (n << 20)
    if (j >> 20) <= 0:
        return s * math.ldexp(z, n)  # subnormal result
    return s * _make(j, _words(z)[1])
