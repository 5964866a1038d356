"""The tails, quantiles and ranks of the tests in :mod:`embedeval._stats`, from scipy: the
chi-square, Fisher's F, the studentized range with infinite degrees of freedom (Nemenyi's), and
average ranks. One place, so that a comparison names what it computes rather than how (the
paired t-test and Wilcoxon's test call ``scipy.stats`` where they run)."""

from __future__ import annotations

import math

import numpy as np

# scipy is imported by the functions that use it: scipy.special adds ~25 MB and scipy.stats ~70 MB
# to a process, which `import embedeval.stats` and an evaluation with intervals need not pay.


def chi2_sf(x: float, df: float) -> float:
    """P(X >= x) for a chi-square X with ``df`` degrees of freedom; NaN for a NaN ``x``."""
    from scipy import special

    return 1.0 if x <= 0 else float(special.chdtrc(df, x))


def f_sf(f: float, df1: float, df2: float) -> float:
    """P(F >= f) for Fisher's F with (``df1``, ``df2``) degrees of freedom; 0 for an infinite
    ``f``, NaN for a NaN one."""
    from scipy import special

    return 1.0 if f <= 0 else float(special.fdtrc(df1, df2, f))


def studentized_range_sf(q, k: int) -> np.ndarray:
    """P(R >= q) for the range R of ``k`` independent standard normal values (the studentized
    range with infinite degrees of freedom), elementwise over ``q``."""
    from scipy.stats import studentized_range

    return studentized_range.sf(q, k, math.inf)


def studentized_range_quantile(p: float, k: int) -> float:
    """The q with P(R <= q) = ``p`` for the range of ``k`` standard normal values."""
    from scipy.stats import studentized_range

    return float(studentized_range.ppf(p, k, math.inf))


def average_ranks(scores) -> np.ndarray:
    """Ranks along the last axis of ``scores`` (..., n): 1 for the highest value, ties averaged
    (two values sharing the 2nd and 3rd places both get 2.5), equal infinities tied; the ranks of
    the lowest first are ``average_ranks(-x)``. The one average-rank helper of embedeval
    (``scipy.stats.rankdata`` of the negated values)."""
    from scipy.stats import rankdata

    return rankdata(-np.asarray(scores, dtype=np.float64), axis=-1)
