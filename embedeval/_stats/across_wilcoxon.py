"""Wilcoxon's signed-rank test of paired values (two systems' scores over datasets), two-sided,
with scipy's names for its conventions: the zeros (``"wilcox"``, ``"pratt"``, ``"zsplit"``), the
continuity correction, and the method (``"exact"``, ``"approx"``, ``"auto"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .across_tails import normal_sf

ZERO_METHODS = ("wilcox", "pratt", "zsplit")
METHODS = ("auto", "exact", "approx")
# "auto" enumerates every sign assignment up to this many pairs when there are ties or zeros
# (2^13 = 8192 assignments), as scipy's permutation fallback does; beyond it, the normal form.
_ENUMERATED = 13
_EXACT_LIMIT = 50  # "auto" takes the exact table up to 50 pairs without ties or zeros


@dataclass(frozen=True)
class SignedRank:
    """``statistic``: min(W+, W-); ``p_value``: two-sided; ``method``: the one used ("exact",
    "approx" or "enumerated"); ``z``: the normal score (NaN unless the normal form was used)."""

    statistic: float
    p_value: float
    method: str
    z: float
    w_plus: float
    n: int


def _ranks_of_absolute(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks of |d| (1 = smallest) and the sizes of its groups of ties."""
    a = np.abs(d)
    below = (a[None, :] < a[:, None]).sum(axis=1)
    equal = (a[None, :] == a[:, None]).sum(axis=1)
    _, counts = np.unique(a, return_counts=True)
    return below + (equal + 1) / 2.0, counts


@lru_cache(maxsize=64)
def _null_table(n: int) -> np.ndarray:
    """P(W+ = w) for w = 0 .. n (n + 1) / 2 under the null without ties: each rank 1..n counted
    with probability 1/2, by convolution (the count of subsets of 1..n with sum w, over 2^n)."""
    table = np.ones(1)
    for rank in range(1, n + 1):
        grown = np.zeros(table.size + rank)
        grown[: table.size] += 0.5 * table
        grown[rank:] += 0.5 * table
        table = grown
    return table


def _exact_p(w_plus: float, n: int) -> float:
    """Two-sided p from the table without ties; a non-integral W+ (from ties or zsplit) is rounded
    up for the lower tail and down for the upper tail, as scipy does."""
    if n == 0:
        return math.nan
    table = _null_table(n)
    lower = float(table[: math.ceil(w_plus) + 1].sum())
    upper = float(table[math.floor(w_plus) :].sum())
    return min(1.0, 2.0 * min(lower, upper))


def _enumerated_p(d: np.ndarray, ranks: np.ndarray, observed: float, zero_share: float) -> float:
    """Two-sided p of W+ over all 2^n sign assignments of the differences (zeros keep their 0 and
    add ``zero_share`` to W+ under "zsplit"): 2 min(P(W+ <= w), P(W+ >= w)), with a relative
    tolerance of 100 float eps, as scipy's permutation test."""
    n = d.size
    signs = ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1) * 2 - 1
    flipped = signs * d[None, :]
    null = ((flipped > 0) * ranks[None, :]).sum(axis=1) + zero_share
    gamma = abs(observed) * np.finfo(np.float64).eps * 100
    lower = np.count_nonzero(null <= observed + gamma) / null.size
    upper = np.count_nonzero(null >= observed - gamma) / null.size
    return min(1.0, 2.0 * min(lower, upper))


def _normal_p(w_plus: float, d: np.ndarray, ranks: np.ndarray, counts: np.ndarray, zero_method: str, correction: bool):
    """(z, two-sided p) of the normal form, with the tie correction sum(t^3 - t) / 48 in the
    variance (zeros out of it under "pratt", Cureton's mean and variance then)."""
    n = float(d.size)
    mean, var = n * (n + 1) / 4.0, n * (n + 1) * (2 * n + 1)
    if zero_method == "pratt":
        zeros = float(np.count_nonzero(d == 0))
        mean -= zeros * (zeros + 1) / 4.0
        var -= zeros * (zeros + 1) * (2 * zeros + 1)
        counts = np.unique(np.abs(d[d != 0]), return_counts=True)[1]
    sd = math.sqrt((var - float(np.sum(counts**3 - counts)) / 2.0) / 24.0)
    if sd == 0:
        return math.nan, math.nan
    z = (w_plus - mean) / sd
    if correction:
        z -= math.copysign(0.5, z) / sd if z != 0 else 0.0
    return z, min(1.0, 2.0 * normal_sf(abs(z)))


def signed_rank(x, y, *, zero_method: str = "wilcox", correction: bool = False, method: str = "auto") -> SignedRank:
    """Wilcoxon's signed-rank test of d = x - y, two-sided.

    The absolute differences are ranked (1 = smallest, ties averaged); W+ is the sum of the ranks
    of the positive differences, W- of the negative ones; the statistic is min(W+, W-).

    Parameters
    ----------
    x, y : array of shape (n,)
    zero_method : {"wilcox", "pratt", "zsplit"}
        Zero differences: dropped before ranking (Wilcoxon), ranked then dropped from W+ and W-
        (Pratt), or ranked and their ranks split half to W+, half to W- (zsplit).
    correction : bool
        The continuity correction of the normal form: |W+ - mean| shrunk by 1/2.
    method : {"auto", "exact", "approx"}
        ``"exact"``: the null distribution of W+ without ties, 2 min(P(W+ <= w), P(W+ >= w));
        ``"approx"``: the normal form, z = (W+ - n (n + 1) / 4) / sd, with
        sd^2 = (n (n + 1) (2n + 1) - sum(t^3 - t) / 2) / 24; ``"auto"``: exact up to 50 pairs
        without ties or zeros, every one of the 2^n sign assignments enumerated up to 13 pairs
        with ties or zeros, the normal form otherwise (scipy's choices; the counts are of the pairs
        given, zeros included).

    Returns
    -------
    SignedRank
        Equal to ``scipy.stats.wilcoxon(x, y, zero_method=..., correction=..., method=...)``
        (``"approx"`` is its ``"asymptotic"``). Every difference 0: statistic 0 and p = 1
        (scipy's answer there depends on the method; it is no evidence either way).

    References
    ----------
    Wilcoxon, F. (1945). Individual comparisons by ranking methods. Biometrics 1, 80-83.
    Pratt, J. W. (1959). Remarks on zeros and ties in the Wilcoxon signed rank procedures. JASA 54.
    Cureton, E. E. (1967). The normal approximation to the signed-rank sampling distribution when
    zero differences are present. JASA 62, 1068-1069.
    """
    d = np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    n_given, n_zeros = d.size, int(np.count_nonzero(d == 0))
    if n_zeros == n_given:  # no difference at all: nothing against the null
        return SignedRank(0.0, 1.0, method, math.nan, 0.0, 0)
    if zero_method == "wilcox":
        d = d[d != 0]
    ranks, counts = _ranks_of_absolute(d)
    w_plus, w_minus = float(ranks[d > 0].sum()), float(ranks[d < 0].sum())
    half = float(ranks[d == 0].sum()) / 2.0 if zero_method == "zsplit" else 0.0
    w_plus, w_minus = w_plus + half, w_minus + half
    used = method
    if method == "auto":
        tied = bool(np.any(counts > 1)) or n_zeros > 0
        used = "approx" if n_given > _EXACT_LIMIT else ("exact" if not tied else "enumerated")
        if used == "enumerated" and n_given > _ENUMERATED:
            used = "approx"
    z = math.nan
    if used == "exact":
        p = _exact_p(w_plus, d.size)
    elif used == "enumerated":
        p = _enumerated_p(d, ranks, w_plus, half)
    else:
        z, p = _normal_p(w_plus, d, ranks, counts, zero_method, correction)
    return SignedRank(min(w_plus, w_minus), p, used, z, w_plus, int(d.size))
