"""Wilcoxon's signed-rank test of paired values (two systems' scores over datasets), two-sided, by
``scipy.stats.wilcoxon``, with its names for the conventions: the zeros (``"wilcox"``,
``"pratt"``, ``"zsplit"``), the continuity correction, and the method (``"exact"``, ``"approx"``,
``"auto"``). What is added here: which method ``"auto"`` takes, said in the result, and the answer
when every difference is 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ZERO_METHODS = ("wilcox", "pratt", "zsplit")
METHODS = ("auto", "exact", "approx")
# "auto" enumerates every sign assignment up to this many pairs when there are ties or zeros
# (2^13 = 8192 assignments); beyond it, the normal form.
_ENUMERATED = 13
_EXACT_LIMIT = 50  # "auto" takes the exact table up to 50 pairs without ties or zeros


@dataclass(frozen=True)
class SignedRank:
    """``statistic``: min(W+, W-); ``p_value``: two-sided; ``method``: the one used (``"exact"``,
    ``"approx"`` or ``"enumerated"``); ``n``: the differences ranked."""

    statistic: float
    p_value: float
    method: str
    n: int


def _method_used(d: np.ndarray, method: str) -> str:
    """``"auto"`` resolved as scipy resolves it: exact up to 50 pairs without ties or zeros, every
    sign assignment enumerated up to 13 pairs with ties or zeros, the normal form otherwise (the
    counts are of the pairs given, zeros included)."""
    if method != "auto":
        return method
    a = np.abs(d)
    tied = np.unique(a).size < a.size or bool(np.any(d == 0))
    if d.size > _EXACT_LIMIT or (tied and d.size > _ENUMERATED):
        return "approx"
    return "enumerated" if tied else "exact"


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
        ``"exact"``: the null distribution of W+ without ties; ``"approx"``: the normal form with
        the tie correction of the variance (scipy's ``"asymptotic"``); ``"auto"``: exact up to 50
        pairs without ties or zeros, every one of the 2^n sign assignments enumerated up to 13
        pairs with ties or zeros, the normal form otherwise.

    Returns
    -------
    SignedRank
        ``scipy.stats.wilcoxon(x, y, zero_method=..., correction=..., method=...)``. Every
        difference 0: statistic 0 and p = 1 (scipy's answer there depends on the method; it is no
        evidence either way).

    References
    ----------
    Wilcoxon, F. (1945). Individual comparisons by ranking methods. Biometrics 1, 80-83.
    Pratt, J. W. (1959). Remarks on zeros and ties in the Wilcoxon signed rank procedures. JASA 54.
    """
    from scipy import stats  # scipy.stats takes ~1 s to import: only where a test runs

    d = np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    if not np.any(d):  # no difference at all: nothing against the null
        return SignedRank(0.0, 1.0, method, 0)
    used = _method_used(d, method)
    scipy_method = {"exact": "exact", "approx": "asymptotic", "enumerated": stats.PermutationMethod()}[used]
    res = stats.wilcoxon(d, zero_method=zero_method, correction=correction, method=scipy_method)
    n = int(np.count_nonzero(d)) if zero_method == "wilcox" else d.size
    return SignedRank(float(res.statistic), float(res.pvalue), used, n)
