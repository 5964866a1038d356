"""Confidence-aware metrics: does a model's confidence predict its retrieval errors?

Confidences are per query, higher = more confident, on any scale (only their order matters,
except where stated). Probabilistic embeddings usually give a sigma per sample: pass
``-sigma`` (or ``1 / sigma``) as the confidence.

Non-finite values: +inf and -inf are ordinary values in an order (``1 / sigma`` with sigma = 0
is the most confident) and equal infinities are tied, as in scipy. NaN has no place in an order
and is refused with a ValueError naming the argument, where scipy would return NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._inputs.arrays import _to_numpy
from ._stats.distributions import average_ranks
from .result import EvaluationResult


def _paired(values, confidence, what: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-query values and confidences as float arrays, dropping skipped (NaN) queries."""
    v = np.asarray(_to_numpy(values, what), dtype=np.float64)
    c = np.asarray(_to_numpy(confidence, "confidence"), dtype=np.float64)
    if v.ndim != 1 or c.shape != v.shape:
        raise ValueError(
            f"'confidence' must have one value per query ({v.shape[0] if v.ndim else 0}); got shape {c.shape}"
        )
    _check_no_nan(c, "confidence")
    keep = ~np.isnan(v)
    if not keep.any():
        raise ValueError("no evaluated query: every per-query value is NaN")
    return v[keep], c[keep], int((~keep).sum())


@dataclass(frozen=True)
class ErrorRejectCurve:
    """Mean error of the kept queries after rejecting the least confident ones.

    Attributes
    ----------
    metric : str
    rejected : numpy.ndarray of shape (n,)
        Fraction rejected, m / n for m = 0 .. n - 1 (at least one query is always kept).
    error : numpy.ndarray of shape (n,)
        Mean of (1 - per-query value) over the kept queries.
    oracle, random : numpy.ndarray of shape (n,)
        The same for a confidence that orders errors perfectly (largest errors rejected first)
        and for an uninformative one (expected curve: the constant mean error).
    area, oracle_area, random_area : float
        Mean of each curve over the rejected fractions (lower is better).
    n_skipped : int
        Queries left out because their value is NaN.
    """

    metric: str
    rejected: np.ndarray
    error: np.ndarray
    oracle: np.ndarray
    random: np.ndarray
    area: float
    oracle_area: float
    random_area: float
    n_skipped: int = 0


def _kept_error(err_sorted_by_rejection: np.ndarray, group_ends: np.ndarray) -> np.ndarray:
    """Mean error kept after rejecting the first m queries (m = 0..n-1) of the given order;
    within a group of tied confidences, rejection takes the group's mean error (the expectation
    over the order of the ties)."""
    n = err_sorted_by_rejection.size
    total = err_sorted_by_rejection.sum()
    group_starts = np.concatenate([[0], group_ends[:-1]])
    group_sum = np.add.reduceat(err_sorted_by_rejection, group_starts)
    group_size = group_ends - group_starts
    before = np.concatenate([[0.0], np.cumsum(group_sum)[:-1]])  # error removed by earlier groups
    m = np.arange(n)
    g = np.searchsorted(group_ends, m, side="right")  # group holding the (m+1)-th rejection
    removed = before[g] + (m - group_starts[g]) * group_sum[g] / group_size[g]
    return (total - removed) / (n - m)


def error_reject_curve(values, confidence, *, metric: str = "metric") -> ErrorRejectCurve:
    """Error-vs-reject curve of per-query metric values against per-query confidences.

    Parameters
    ----------
    values : array-like of shape (n_queries,)
        Per-query values in [0, 1] (e.g. ``result.per_query["precision@1"]``); error = 1 - value.
        NaN (skipped) queries are left out.
    confidence : array-like of shape (n_queries,)
        Higher = more confident; ties are handled by their expected effect. +-inf are allowed
        (the most and least confident), NaN is not.
    metric : str
        Name carried by the curve.

    Returns
    -------
    ErrorRejectCurve
    """
    v, c, n_skipped = _paired(values, confidence, "values")
    err = 1.0 - v
    n = err.size
    order = np.argsort(c, kind="stable")
    ends = _group_ends(c[order])
    curve = _kept_error(err[order], ends)
    oracle = _kept_error(np.sort(err)[::-1], np.arange(1, n + 1))
    random = np.full(n, err.mean())
    return ErrorRejectCurve(
        metric,
        np.arange(n) / n,
        curve,
        oracle,
        random,
        float(curve.mean()),
        float(oracle.mean()),
        float(random.mean()),
        n_skipped,
    )


def error_reject_curves(result: EvaluationResult, confidence, metrics=None) -> dict[str, ErrorRejectCurve]:
    """:func:`error_reject_curve` for several metrics of one evaluation."""
    names = list(metrics) if metrics is not None else list(result.per_query)  # set-level metrics have no curve
    return {m: error_reject_curve(result.per_query[m], confidence, metric=m) for m in names}


def auroc(correct, confidence) -> float:
    """Area under the ROC curve of ``confidence`` as a score for ``correct``.

    The probability that a correct query has a higher confidence than an incorrect one, ties
    counting one half (Mann-Whitney U / (n_correct n_incorrect)). 0.5 is chance, 1 perfect.
    NaN when all queries are correct or all incorrect.
    """
    y, c, _ = _paired(correct, confidence, "correct")
    pos = y > 0.5
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = average_ranks(-c)  # 1 for the lowest confidence
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def top1_auroc(result: EvaluationResult, confidence) -> float:
    """How well confidence predicts a correct first neighbour: AUROC of ``confidence`` against
    ``precision@1`` (1 when the nearest reference shares the query's label).

    This replaces the seed repository's ad-hoc averaging of confidences per recall value with a
    standard, scale-free summary: only the order of the confidences matters.
    """
    if "precision@1" not in result.per_query:
        raise ValueError("the result must contain 'precision@1'; evaluate with metrics including it")
    return auroc(result.per_query["precision@1"], confidence)


def _check_no_nan(x: np.ndarray, name: str) -> None:
    """Raise ValueError if ``x`` holds NaN: it has no rank (infinities do)."""
    nan = np.flatnonzero(np.isnan(x))
    if nan.size:
        raise ValueError(
            f"'{name}' must not contain NaN (it has no rank); got {nan.size} NaN(s), first at position {nan[0]}"
        )


def _group_ends(sorted_values: np.ndarray) -> np.ndarray:
    """End (exclusive) of each run of equal values in a sorted array. Compared with ``!=``, not
    through differences: inf - inf is NaN, which would split equal infinities apart."""
    return np.concatenate([np.flatnonzero(sorted_values[1:] != sorted_values[:-1]) + 1, [sorted_values.size]])


def _two_vectors(a, b) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(_to_numpy(a, "a"), dtype=np.float64)
    y = np.asarray(_to_numpy(b, "b"), dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"'a' and 'b' must be 1-D of one equal length >= 2; got {x.shape} and {y.shape}")
    _check_no_nan(x, "a")
    _check_no_nan(y, "b")
    return x, y


def spearman(a, b) -> float:
    """Spearman's rank correlation (Pearson correlation of average ranks); NaN if one is constant.

    ``a`` and ``b`` may hold +-inf (equal infinities tie); NaN raises ValueError.
    """
    x, y = _two_vectors(a, b)
    rx, ry = average_ranks(-x) - (x.size + 1) / 2, average_ranks(-y) - (x.size + 1) / 2
    den = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    return float((rx * ry).sum() / den) if den > 0 else float("nan")


def kendall(a, b) -> float:
    """Kendall's tau-b (ties in either variable corrected); NaN if one is constant.

    ``a`` and ``b`` may hold +-inf (equal infinities tie); NaN raises ValueError.
    """
    from scipy.stats import kendalltau  # O(n log n), ties corrected (tau-b); NaN for a constant side

    return float(kendalltau(*_two_vectors(a, b)).statistic)
