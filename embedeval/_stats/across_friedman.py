"""Friedman's test over datasets, Iman and Davenport's F, and Nemenyi's post-hoc comparison of mean
ranks (its critical difference and its p-values), after Demšar (2006).

Every function takes a table of scores of shape (n_datasets, n_systems), higher better, and ranks
the systems within each dataset: rank 1 is the highest score, tied scores share the average of
the ranks they span.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .distributions import average_ranks, chi2_sf, f_sf, studentized_range_quantile, studentized_range_sf


@dataclass(frozen=True)
class Friedman:
    """Friedman's test and Iman and Davenport's F of one table of scores.

    ``statistic`` is the chi-square with ``n_systems - 1`` degrees of freedom and ``p_value`` its
    tail; ``f``, ``df1``, ``df2`` and ``p_f`` the F form.
    """

    statistic: float
    df: int
    p_value: float
    f: float
    df1: int
    df2: int
    p_f: float
    n_datasets: int
    n_systems: int


def friedman(scores: np.ndarray) -> Friedman:
    """Friedman's test that every system has the same mean rank over the datasets.

    With N datasets, k systems and mean ranks R_j,

        chi2_F = 12 N / (k (k + 1)) * (sum_j R_j^2 - k (k + 1)^2 / 4),

    divided by the tie correction 1 - sum(t^3 - t) / (N k (k^2 - 1)) over every group of t tied
    scores within a dataset (so it equals ``scipy.stats.friedmanchisquare``), compared with the
    chi-square with k - 1 degrees of freedom. Iman and Davenport's less conservative form is

        F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)

    with (k - 1, (k - 1)(N - 1)) degrees of freedom; infinite (p = 0) when every dataset ranks the
    systems alike. A table where every score of every dataset is tied gives chi2 = 0 and p = 1.

    References
    ----------
    Friedman, M. (1937). The use of ranks to avoid the assumption of normality implicit in the
    analysis of variance. JASA 32, 675-701. Iman, R. L. and Davenport, J. M. (1980).
    Approximations of the critical region of the Friedman statistic. Comm. Stat. 9, 571-595.
    Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR 7, 1-30.
    """
    n, k = scores.shape
    ranks = average_ranks(scores)
    mean = ranks.mean(axis=0)
    chi2 = 12.0 * n / (k * (k + 1)) * (float(np.sum(mean**2)) - k * (k + 1) ** 2 / 4.0)
    ties = 0.0
    for row in np.asarray(scores, dtype=np.float64):
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts**3 - counts))
    correction = 1.0 - ties / (n * k * (k * k - 1))
    chi2 = chi2 / correction if correction > 0 else 0.0
    chi2 = max(chi2, 0.0)  # rounding of an exact 0
    df1, df2 = k - 1, (k - 1) * (n - 1)
    denominator = n * (k - 1) - chi2
    f = (n - 1) * chi2 / denominator if denominator > 1e-12 * n * k else math.inf
    return Friedman(chi2, k - 1, chi2_sf(chi2, k - 1), f, df1, df2, f_sf(f, df1, df2) if df2 > 0 else math.nan, n, k)


def nemenyi_q(alpha: float, k: int) -> float:
    """Demšar's q_alpha for k systems: the 1 - alpha quantile of the studentized range of k normal
    values with infinite degrees of freedom, divided by sqrt(2)."""
    return studentized_range_quantile(1.0 - alpha, k) / math.sqrt(2.0)


def critical_difference(alpha: float, k: int, n: int) -> float:
    """Nemenyi's critical difference of mean ranks, q_alpha sqrt(k (k + 1) / (6 N)): two systems
    whose mean ranks over N datasets differ by at least this much differ at level alpha."""
    return nemenyi_q(alpha, k) * math.sqrt(k * (k + 1) / (6.0 * n))


def nemenyi_p_values(mean_ranks: np.ndarray, n: int, pairs: list[tuple[int, int]]) -> np.ndarray:
    """Nemenyi's p-value of each pair (i, j): P(R >= sqrt(2) abs(R_i - R_j) / sqrt(k (k + 1) / (6 N)))
    for the studentized range R of k normal values (as ``scikit_posthocs.posthoc_nemenyi_friedman``).
    They control the family-wise error over all pairs already; no further correction."""
    k = mean_ranks.size
    scale = math.sqrt(k * (k + 1) / (6.0 * n))
    gaps = np.array([abs(mean_ranks[a] - mean_ranks[b]) for a, b in pairs], dtype=np.float64)
    return np.asarray(studentized_range_sf(math.sqrt(2.0) * gaps / scale, k), dtype=np.float64).reshape(len(pairs))
