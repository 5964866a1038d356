r"""Partial harmonic sums in O(1) per tie group, accurate to a few ulps at any depth.

The expected average precision of a tie group (:mod:`embedeval._expected`) needs, for a group
whose first position is rank ``x`` and whose ``m`` positions lie inside the cutoff,

.. math::

    H(x, m) = \sum_{q=0}^{m-1} \frac{1}{x+q}, \qquad
    K(x, m) = \sum_{q=0}^{m-1} \frac{q}{x+q} = m - x\,H(x, m).

Both are differences of large nearly equal numbers when written as harmonic numbers
(:math:`H_{x+m-1} - H_{x-1}` loses about :math:`\log_{10}(x/m)` digits, and ``m - x H`` loses more),
so each is evaluated where it has no cancellation:

* ``x < 64`` and ``m < 64``: a table of exactly rounded sums (``math.fsum``);
* ``x < 64`` and ``m >= 64``: :math:`H_{x+m-1} - H_{x-1}`, which is at least :math:`\ln 2`, and
  ``K = m - x H``, which is at least ``0.3 m``: at most a few ulps lost;
* ``x >= 64``: the asymptotic series of the digamma function, differenced term by term in a
  form with no subtraction of large numbers, up to :math:`x^{-8}` (truncation below 1e-17
  relative), with :math:`t - \log(1+t)` (``t = m/x``) from a series in :math:`u = t/(2+t)`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

_SMALL = 64  # below this start rank (and length) the sums come from a table
_EULER_GAMMA = 0.57721566490153286061


@functools.cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(H(x, m), K(x, m)) for x, m < _SMALL, and the harmonic numbers H_j for j < 2 _SMALL."""
    h = np.zeros((_SMALL, _SMALL))
    k = np.zeros((_SMALL, _SMALL))
    for x in range(1, _SMALL):
        for m in range(1, _SMALL):
            h[x, m] = math.fsum(1.0 / (x + q) for q in range(m))
            k[x, m] = math.fsum(q / (x + q) for q in range(m))
    numbers = np.array([math.fsum(1.0 / i for i in range(1, j + 1)) for j in range(2 * _SMALL)])
    return h, k, numbers


def _harmonic_number(j: np.ndarray) -> np.ndarray:
    """H_j = sum_{i=1}^{j} 1/i for integer-valued j >= 0 (asymptotic series from 2 _SMALL on)."""
    numbers = _tables()[2]
    out = np.empty_like(j)
    small = j < numbers.size
    out[small] = numbers[j[small].astype(np.intp)]
    big = j[~small]
    inv2 = 1.0 / (big * big)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 / 240)))
    out[~small] = np.log(big) + _EULER_GAMMA + 0.5 / big - series
    return out


def _t_minus_log1p(t: np.ndarray) -> np.ndarray:
    r""":math:`t - \log(1 + t)` for t >= 0 without cancellation at small t."""
    out = np.empty_like(t)
    small = t <= 1.0
    # log(1+t) = 2 atanh(u), t = 2u/(1-u)  =>  t - log(1+t) = 2u^2/(1-u) - 2 sum_{k>=1} u^(2k+1)/(2k+1);
    # u <= 1/3 here, so 20 terms reach 1e-19, and the leading term dominates the series 10 to 1.
    u = t[small] / (2.0 + t[small])
    u2 = u * u
    acc = np.zeros_like(u)
    for j in range(20, 0, -1):
        acc = acc * u2 + 1.0 / (2 * j + 1)
    out[small] = 2.0 * u2 / (1.0 - u) - 2.0 * u * u2 * acc
    big = t[~small]
    out[~small] = big - np.log1p(big)  # >= 0.3 t: at most 2 bits lost
    return out


def partial_harmonic(x: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`H(x, m) = \sum_{q<m} 1/(x+q)` and :math:`K(x, m) = \sum_{q<m} q/(x+q)`, elementwise.

    Parameters
    ----------
    x : numpy.ndarray of float64
        Integer-valued, >= 1: the rank of the first position.
    m : numpy.ndarray of float64, the shape of ``x``
        Integer-valued, >= 0: the number of positions (0 gives 0).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        H and K, the shape of ``x``; relative error a few ulps (``tests/test_ties.py`` checks
        them against ``math.fsum`` of the terms up to x = 10^9).
    """
    h_tab, k_tab, _ = _tables()
    h = np.zeros_like(x)
    k = np.zeros_like(x)
    used = m > 0
    near = used & (x < _SMALL)
    table = near & (m < _SMALL)
    xi, mi = x[table].astype(np.intp), m[table].astype(np.intp)
    h[table], k[table] = h_tab[xi, mi], k_tab[xi, mi]

    long = near & (m >= _SMALL)
    xl, ml = x[long], m[long]
    hl = _harmonic_number(xl + ml - 1.0) - _harmonic_number(xl - 1.0)
    h[long], k[long] = hl, ml - xl * hl

    far = used & (x >= _SMALL)
    xf, mf = x[far], m[far]
    y = xf + mf
    a, b = 1.0 / (xf * xf), 1.0 / (y * y)
    # psi(y) - psi(x) = log(y/x) + (1/(2x) - 1/(2y)) + sum_j c_j (x^-2j - y^-2j); each
    # difference x^-2j - y^-2j = (a - b) * (a^(j-1) + ... + b^(j-1)) with a - b = m (x + y) / (x y)^2.
    d2 = mf * (xf + y) * a * b
    corr = d2 * (1 / 12 - (a + b) / 120 + (a * a + a * b + b * b) / 252 - (a + b) * (a * a + b * b) / 240)
    h[far] = np.log1p(mf / xf) + mf / (2.0 * xf * y) + corr
    k[far] = xf * _t_minus_log1p(mf / xf) - mf / (2.0 * y) - xf * corr
    one = m == 1  # exact, as a single untied item needs: 1/x and 0 (the series leaves ~1e-20 in K)
    h[one], k[one] = 1.0 / x[one], 0.0
    return h, k
