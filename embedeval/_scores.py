"""Evaluation of a queries x items score matrix (the recommender form), through the same kernels."""

from __future__ import annotations

import numpy as np

from . import _budget
from ._graded import check_threshold, conventions, finish, judged_hits
from ._inputs import _to_numpy, check_choice
from ._metrics import DEFAULT_RANKING_METRICS, RANKINGS, Needs, parse_metrics
from .result import EvaluationResult

TIE_RULE = "items with equal scores are ranked by column index, lower first"


def _top_k(scores: np.ndarray, depth: int) -> np.ndarray:
    """Column indices of each row's ``depth`` highest scores, best first, ties by lower index."""
    n_items = scores.shape[1]
    if depth >= n_items:
        return np.argsort(-scores, axis=1, kind="stable")
    kth = -np.partition(-scores, depth - 1, axis=1)[:, depth - 1 : depth]  # the depth-th best score
    above = scores > kth
    tied = scores == kth
    # Take every item above the k-th score, then the lowest-indexed tied items to fill.
    take = above | (tied & (np.cumsum(tied, axis=1) <= depth - np.count_nonzero(above, axis=1)[:, None]))
    cols = np.nonzero(take)[1].reshape(scores.shape[0], depth)
    order = np.lexsort((cols, -np.take_along_axis(scores, cols, 1)), axis=1)
    return np.take_along_axis(cols, order, 1)


def evaluate_scores(
    scores,
    relevance,
    *,
    metrics=DEFAULT_RANKING_METRICS,
    threshold: float = 1,
    empty: str = "skip",
) -> EvaluationResult:
    r"""Evaluate a queries x items score matrix against a relevance matrix (the recommender form).

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_items)
        Higher is better; NaN is rejected, infinities are allowed.
    relevance : array-like of shape (n_queries, n_items)
        Grades (0 = not relevant); a boolean or 0/1 matrix for binary relevance.
    metrics, threshold, empty
        As in :func:`evaluate_rankings`.

    Returns
    -------
    EvaluationResult

    Notes
    -----
    Each row is ranked by decreasing score, equal scores by increasing column index. With only
    cutoff metrics the top k is found by partial sorting; a metric without a cutoff ranks all items.

    Examples
    --------
    >>> import numpy as np, embedeval
    >>> s = np.array([[4.0, 3.0, 2.0, 1.0, 0.0]])
    >>> g = np.array([[1, 1, 0, 0, 1]])
    >>> embedeval.evaluate_scores(s, g, metrics=["recall@2", "capped_recall@2"]).summary
    {'recall@2': 0.6666666666666666, 'capped_recall@2': 1.0}
    """
    parsed = parse_metrics(metrics, RANKINGS)
    threshold = check_threshold(threshold)
    check_choice(empty, "empty", ("skip", "zero"))
    s = _to_numpy(scores, "scores")
    g = _to_numpy(relevance, "relevance")
    if s.ndim != 2 or s.dtype.kind not in "biuf" or s.size == 0:
        raise ValueError(
            f"'scores' must be a non-empty 2-D array of numbers (n_queries, n_items); got {s.dtype} {s.shape}"
        )
    if g.shape != s.shape or g.dtype.kind not in "biuf":
        raise ValueError(f"'relevance' must be numbers of the shape of 'scores' {s.shape}; got {g.dtype} {g.shape}")
    s = s.astype(np.float64)
    g = g.astype(np.float64)
    if np.isnan(s).any():
        raise ValueError(
            f"'scores' must not contain NaN; got {int(np.isnan(s).sum())}, first in row "
            f"{int(np.flatnonzero(np.isnan(s).any(axis=1))[0])}"
        )
    if not np.isfinite(g).all():
        raise ValueError("'relevance' must be finite")
    needs = Needs.of(parsed)
    depth = s.shape[1] if needs.r or needs.whole_ranking else min(needs.k, s.shape[1])
    rows = max(1, _budget.RANKING_ELEMENTS // s.shape[1])
    parts = []
    for start in range(0, s.shape[0], rows):
        cols = _top_k(s[start : start + rows], depth)
        parts.append(np.take_along_axis(g[start : start + rows], cols, 1))
    grade_at = np.concatenate(parts)
    q, pos = np.nonzero(grade_at)  # only judged items (non-zero grade) can count
    return finish(
        parsed,
        judged_hits(q, pos + 1.0, grade_at[q, pos], s.shape[0], threshold, g),
        empty,
        conventions(threshold, empty, TIE_RULE),
        {"input": "scores", "threshold": threshold, "n_items": int(s.shape[1]), "depth": int(depth)},
    )
