r"""Partial harmonic sums in O(1) per tie group, accurate to a few ulps at any depth.

The expected average precision of a tie group (:mod:`embedeval._metrics.expected`) needs, for a group
whose first position is rank ``x`` and whose ``m`` positions lie inside the cutoff,

.. math::

    H(x, m) = \sum_{q=0}^{m-1} \frac{1}{x+q}, \qquad
    K(x, m) = \sum_{q=0}^{m-1} \frac{q}{x+q} = m - x\,H(x, m).

Both are differences of large nearly equal numbers when written as harmonic numbers
(:math:`H_{x+m-1} - H_{x-1}` loses about :math:`\log_{10}(x/m)` digits, and ``m - x H`` loses more),
so each is evaluated where it has no cancellation:

* ``x < 256`` and ``m < 256``: a table, built once by compensated summation (within an ulp);
* ``x < 256`` and ``m >= 256``: :math:`H_{x+m-1} - H_{x-1}`, which is at least :math:`\ln 2`, and
  ``K = m - x H``, which is at least ``0.3 m``: at most a few ulps lost;
* ``x >= 256``: the asymptotic series of the digamma function, differenced term by term in a
  form with no subtraction of large numbers, up to :math:`x^{-8}` (truncation below 1e-23
  relative), with :math:`t - \log(1+t)` (``t = m/x``) from a series in :math:`u = t/(2+t)`.
"""

from __future__ import annotations

import functools

import numpy as np

_SMALL = 256  # below this start rank (and length) the sums come from a table
_EULER_GAMMA = 0.57721566490153286061


def _compensated_cumsum(terms: np.ndarray) -> np.ndarray:
    """Prefix sums along axis 1, each to within about an ulp (Neumaier's compensated summation)."""
    out = np.zeros(terms.shape)
    total, error = np.zeros(terms.shape[0]), np.zeros(terms.shape[0])
    for q in range(terms.shape[1]):
        term = terms[:, q]
        new = total + term
        error += np.where(np.abs(total) >= np.abs(term), (total - new) + term, (term - new) + total)
        total = new
        out[:, q] = total + error
    return out


@functools.cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """H(x, m) and K(x, m) for x, m < _SMALL (flattened, index x * _SMALL + m), and H_j for j < 2 _SMALL."""
    x = np.arange(_SMALL, dtype=np.float64)[:, None]
    q = np.arange(_SMALL - 1, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):  # row x = 0 is never used
        h = np.concatenate(
            [np.zeros((_SMALL, 1)), _compensated_cumsum(np.broadcast_to(1.0 / (x + q), (_SMALL, q.size)))], 1
        )
        k = np.concatenate(
            [np.zeros((_SMALL, 1)), _compensated_cumsum(np.broadcast_to(q / (x + q), (_SMALL, q.size)))], 1
        )
    numbers = np.concatenate([[0.0], _compensated_cumsum(1.0 / np.arange(1.0, 2 * _SMALL)[None, :])[0]])
    return h.ravel(), k.ravel(), numbers


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
    # log(1+t) = 2 atanh(u), t = 2u/(1-u)  =>  t - log(1+t) = 2u^2/(1-u) - 2 sum_{j>=1} u^(2j+1)/(2j+1);
    # the leading term dominates the series 10 to 1 (u <= 1/3), which stops once u^(2j) < 1e-17.
    u = t[small] / (2.0 + t[small])
    u2 = u * u
    largest = float(u2.max(initial=0.0))
    n_terms = 1 if largest == 0.0 else min(20, max(1, int(np.ceil(-17.0 / np.log10(largest)))))
    acc = np.zeros_like(u)
    for j in range(n_terms, 0, -1):
        acc = acc * u2 + 1.0 / (2 * j + 1)
    out[small] = 2.0 * u2 / (1.0 - u) - 2.0 * u * u2 * acc
    big = t[~small]
    out[~small] = big - np.log1p(big)  # >= 0.3 t: at most 2 bits lost
    return out


def _asymptotic(x: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """H and K for x >= _SMALL from the digamma series."""
    y = x + m
    a, b = 1.0 / (x * x), 1.0 / (y * y)
    # psi(y) - psi(x) = log(y/x) + (1/(2x) - 1/(2y)) + sum_j c_j (x^-2j - y^-2j); each
    # difference x^-2j - y^-2j = (a - b) * (a^(j-1) + ... + b^(j-1)) with a - b = m (x + y) / (x y)^2.
    d2 = m * (x + y) * a * b
    corr = d2 * (1 / 12 - (a + b) * (1 / 120 + (a * a + b * b) / 240) + (a * a + a * b + b * b) / 252)
    h = np.log1p(m / x) + m / (2.0 * x * y) + corr
    k = x * _t_minus_log1p(m / x) - m / (2.0 * y) - x * corr
    return h, k


def partial_harmonic(x: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`H(x, m) = \sum_{q<m} 1/(x+q)` and :math:`K(x, m) = \sum_{q<m} q/(x+q)`, elementwise.

    Parameters
    ----------
    x : numpy.ndarray of float64, 1-D
        Integer-valued, >= 1: the rank of the first position.
    m : numpy.ndarray of float64, the shape of ``x``
        Integer-valued, >= 0: the number of positions (0 gives 0).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        H and K, the shape of ``x``; relative error a few ulps (``tests/test_ties.py`` checks
        them against ``math.fsum`` of the terms up to x = 10^9). One position gives exactly
        1/x and 0, as a single untied item needs.
    """
    h_tab, k_tab, numbers = _tables()
    table = (x < _SMALL) & (m < _SMALL)
    if table.all():  # the common case: one lookup each
        idx = (x * _SMALL + m).astype(np.intp)
        return h_tab.take(idx), k_tab.take(idx)
    h, k = np.zeros_like(x), np.zeros_like(x)
    idx = (x[table] * _SMALL + m[table]).astype(np.intp)
    h[table], k[table] = h_tab.take(idx), k_tab.take(idx)
    long = (x < _SMALL) & (m >= _SMALL)
    xl, ml = x[long], m[long]
    hl = _harmonic_number(xl + ml - 1.0) - numbers.take((xl - 1.0).astype(np.intp))
    h[long], k[long] = hl, ml - xl * hl
    far = (x >= _SMALL) & (m > 0)
    h[far], k[far] = _asymptotic(x[far], m[far])
    one = m == 1  # exact: the series leaves ~1e-20 in K
    h[one], k[one] = 1.0 / x[one], 0.0
    return h, k
