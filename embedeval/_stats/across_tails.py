"""Tail probabilities of the tests across datasets, in float64 without scipy: the normal, the
chi-square (regularised incomplete gamma), Fisher's F (through the incomplete beta of
:mod:`.distributions`) and the studentized range with infinite degrees of freedom (numeric
integration), with its quantile (bisection).
"""

from __future__ import annotations

import math

import numpy as np

from .distributions import incomplete_beta

_EPS = 1e-15
_TINY = 1e-300
_MAX_TERMS = 100_000
# The studentized range integrand is negligible beyond |z| = 9 (phi(9) ~ 1e-18); Simpson's rule
# with this step is exact to about 1e-10 there.
_Z_LIMIT, _Z_STEP = 9.0, 0.005


def normal_sf(z: float) -> float:
    """P(Z >= z) for a standard normal Z: erfc(z / sqrt(2)) / 2."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _lower_gamma_series(a: float, x: float) -> float:
    """P(a, x) by its power series, sum of x^n / (a (a + 1) ... (a + n)) (fast for x < a + 1)."""
    term = total = 1.0 / a
    for n in range(1, _MAX_TERMS):
        term *= x / (a + n)
        total += term
        if abs(term) < abs(total) * _EPS:
            return total * math.exp(-x + a * math.log(x) - math.lgamma(a))
    raise ArithmeticError(f"incomplete gamma series did not converge for a={a}, x={x}")


def _upper_gamma_fraction(a: float, x: float) -> float:
    """Q(a, x) by its continued fraction (modified Lentz; fast for x >= a + 1)."""
    b = x + 1.0 - a
    c, d = 1.0 / _TINY, 1.0 / b
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = b + an / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h * math.exp(-x + a * math.log(x) - math.lgamma(a))
    raise ArithmeticError(f"incomplete gamma fraction did not converge for a={a}, x={x}")


def chi2_sf(x: float, df: float) -> float:
    """P(X >= x) for a chi-square X with ``df`` degrees of freedom: the regularised upper incomplete
    gamma Q(df / 2, x / 2). NaN for a NaN ``x``."""
    if math.isnan(x):
        return math.nan
    if x <= 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    a, half = df / 2.0, x / 2.0
    if half < a + 1.0:
        return max(0.0, 1.0 - _lower_gamma_series(a, half))
    return _upper_gamma_fraction(a, half)


def f_sf(f: float, df1: float, df2: float) -> float:
    """P(F >= f) for Fisher's F with (``df1``, ``df2``) degrees of freedom:
    I_{df2 / (df2 + df1 f)}(df2 / 2, df1 / 2)."""
    if math.isnan(f):
        return math.nan
    if f <= 0:
        return 1.0
    if math.isinf(f):
        return 0.0
    return incomplete_beta(df2 / 2.0, df1 / 2.0, df2 / (df2 + df1 * f))


def _normal_cdf(z: np.ndarray) -> np.ndarray:
    return np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in z.tolist()])


_GRID = np.arange(-_Z_LIMIT, _Z_LIMIT + _Z_STEP / 2, _Z_STEP)
_SIMPSON = np.where(np.arange(_GRID.size) % 2 == 1, 4.0, 2.0)
_SIMPSON[0] = _SIMPSON[-1] = 1.0
_PHI = np.exp(-0.5 * _GRID**2) / math.sqrt(2 * math.pi)
_CDF = _normal_cdf(_GRID)


def studentized_range_cdf(q: float, k: int) -> float:
    """P(R <= q) for the range R of ``k`` independent standard normal values (the studentized
    range with infinite degrees of freedom):

        P(R <= q) = k * integral over z of phi(z) * (Phi(z + q) - Phi(z))^(k - 1) dz,

    by Simpson's rule on [-9, 9] (absolute error about 1e-10).
    """
    if q <= 0:
        return 0.0
    if math.isinf(q):
        return 1.0
    inner = np.clip(_normal_cdf(_GRID + q) - _CDF, 0.0, 1.0)
    total = float(np.sum(_SIMPSON * _PHI * inner ** (k - 1))) * _Z_STEP / 3.0
    return min(1.0, k * total)


def studentized_range_sf(q: float, k: int) -> float:
    """P(R >= q), one minus :func:`studentized_range_cdf` (absolute error about 1e-10)."""
    if math.isnan(q):
        return math.nan
    return max(0.0, 1.0 - studentized_range_cdf(q, k))


def studentized_range_quantile(p: float, k: int) -> float:
    """The q with P(R <= q) = ``p`` for the range of ``k`` standard normal values, by bisection
    to 1e-12 (the cdf rises monotonically from 0 at q = 0)."""
    low, high = 0.0, 1.0
    while studentized_range_cdf(high, k) < p:
        low, high = high, 2.0 * high
    while high - low > 1e-12 * max(1.0, high):
        mid = 0.5 * (low + high)
        if studentized_range_cdf(mid, k) < p:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)
