"""Evaluation of a queries x items score matrix (the recommender form), through the same kernels."""

from __future__ import annotations

import numpy as np

from .._core import budget as _budget
from .._inputs.arrays import _to_numpy
from .._inputs.groups import read_groups
from .._metrics.registry import DEFAULT_RANKING_METRICS, Needs
from .._metrics.ties import describe, group_starts
from ..result import EvaluationResult
from .graded import Judged, check_options, conventions, finish, per_query

TIE_RULE = "items with equal scores are ranked by column index, lower first"
TIED = "exactly equal scores (-0.0 ties 0.0); a tie group reaching past the depth ranked is counted whole"


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


def exact_float_scores(scores: np.ndarray) -> np.ndarray:
    """Scores as float64 with their order and ties intact.

    Integer scores beyond 2**53 would merge when cast (2**53 and 2**53 + 1 become one float), so
    they are replaced by their rank among the distinct scores of the array (``np.unique``'s
    inverse): same order, same ties, every value exact in float64.
    """
    if scores.dtype.kind in "iu" and scores.size and max(abs(int(scores.min())), abs(int(scores.max()))) > 2**53:
        return np.unique(scores, return_inverse=True)[1].reshape(scores.shape).astype(np.float64)
    return scores.astype(np.float64)


def _judged_items(scores: np.ndarray, grades: np.ndarray, depth: int, groups: bool):
    """(rows, ranks, grades[, group starts, group sizes]) of a block's positively graded items
    among the top ``depth`` (ties by lower index).

    With ``groups``, each item's tie group (items scoring more, items scoring the same) is
    counted over the whole row, and the graded items of the last group beyond the depth are
    included too (rank ``depth + 1``): a cut through a tie group must see all of it.
    """
    cols = _top_k(scores, depth)
    grade_at = np.take_along_axis(grades, cols, 1)
    q, pos = np.nonzero(grade_at > 0)
    if not groups:
        return q, pos + 1.0, grade_at[q, pos]
    ranked = np.take_along_axis(scores, cols, 1)  # each row descending
    b = ranked.shape[0]
    new = group_starts(ranked)
    cut_short = depth < scores.shape[1]
    if cut_short:  # the last group ranked may reach past the depth: count it in the whole row
        tied = scores == ranked[:, -1:]
        n_tied = np.count_nonzero(tied, axis=1)
    if new.all() and (not cut_short or n_tied.max() <= 1):
        # No two ranked items share a score, and none beyond the depth shares the last one's:
        # every group is one item (the common case, found without a search per item).
        return q, pos + 1.0, grade_at[q, pos], pos.astype(np.float64), np.ones(q.size)
    # Groups as flat (row-major) places of their first items: each graded item's group is found by
    # one binary search, instead of start and stop arrays over every ranked place.
    starts = np.append(np.flatnonzero(new), b * depth)
    group = np.searchsorted(starts, q * depth + pos, side="right") - 1
    q_start, q_size = starts[group] - q * depth, starts[group + 1] - starts[group]
    row_ends = np.arange(1, b + 1) * depth
    inside = row_ends - starts[np.searchsorted(starts, row_ends) - 1]  # size of each row's last group ranked
    if not cut_short:
        n_tied = inside
    q_size = np.where(q_start + q_size == depth, n_tied[q], q_size)
    rows, ranks, grade = q, pos + 1.0, grade_at[q, pos]
    cut = np.flatnonzero(n_tied > inside)  # rows whose last group reaches past the depth
    if cut.size:
        beyond = tied[cut] & (grades[cut] > 0) & (np.cumsum(tied[cut], axis=1) > inside[cut, None])
        bq, bc = np.nonzero(beyond)
        rows = np.concatenate([rows, cut[bq]])
        ranks = np.concatenate([ranks, np.full(bq.size, depth + 1.0)])
        grade = np.concatenate([grade, grades[cut[bq], bc]])
        q_start = np.concatenate([q_start, (depth - inside[cut])[bq]])
        q_size = np.concatenate([q_size, n_tied[cut][bq]])
    return rows, ranks, grade, q_start.astype(np.float64), q_size.astype(np.float64)


def evaluate_scores(
    scores,
    relevance,
    *,
    metrics=DEFAULT_RANKING_METRICS,
    threshold: float = 1,
    empty: str = "skip",
    ties: str | None = None,
    groups=None,
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
    ties : {None, "expected", "optimistic", "pessimistic"}
        Items with exactly equal scores: None ranks them by column index, lower first;
        ``"expected"`` gives the exact expected value over every order of them (McSherry &
        Najork 2008, in closed form), ``"optimistic"`` / ``"pessimistic"`` the order with
        relevant (higher-graded) items first / last. A tie group that reaches past the depth
        a cutoff needs is counted whole.
    groups : array-like of shape (n_queries,), optional
        One group per row: each metric is also averaged within each group, in ``result.per_group``.

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
    parsed, threshold, ties = check_options(metrics, threshold, empty, False, ties)
    s = _to_numpy(scores, "scores")
    g = _to_numpy(relevance, "relevance")
    if s.ndim != 2 or s.dtype.kind not in "biuf" or s.size == 0:
        raise ValueError(
            f"'scores' must be a non-empty 2-D array of numbers (n_queries, n_items); got {s.dtype} {s.shape}"
        )
    if g.shape != s.shape or g.dtype.kind not in "biuf":
        raise ValueError(f"'relevance' must be numbers of the shape of 'scores' {s.shape}; got {g.dtype} {g.shape}")
    s = exact_float_scores(s)
    g = g.astype(np.float64)
    if np.isnan(s).any():
        raise ValueError(
            f"'scores' must not contain NaN; got {int(np.isnan(s).sum())}, first in row "
            f"{int(np.flatnonzero(np.isnan(s).any(axis=1))[0])}"
        )
    if not np.isfinite(g).all():
        raise ValueError("'relevance' must be finite")
    query_groups = read_groups(groups, s.shape[0])
    needs = Needs.of(parsed)
    depth = s.shape[1] if needs.r or needs.whole_ranking else min(needs.k, s.shape[1])
    rows = max(1, _budget.RANKING_ELEMENTS // s.shape[1])
    parts = []
    for start in range(0, s.shape[0], rows):
        block = _judged_items(s[start : start + rows], g[start : start + rows], depth, ties is not None)
        parts.append((block[0] + start, *block[1:]))
    columns = [np.concatenate(c) for c in zip(*parts, strict=True)]
    jr, jc = np.nonzero(g > 0)
    groups, rule = columns[3:], ties
    if ties is not None and not (columns[4] > 1).any():
        # No graded item shares its score with another item: every order of the tied items gives
        # the index rule's values, which the ordinary kernels compute faster.
        groups, rule = [], None
    judged = Judged(s.shape[0], *columns[:3], jr, g[jr, jc], *groups)
    values, n_relevant = per_query(parsed, judged, threshold, rule)
    result = finish(
        parsed,
        values,
        n_relevant,
        empty,
        conventions(threshold, empty, describe(ties, TIE_RULE, TIED)),
        {
            "input": "scores",
            "threshold": threshold,
            "ties": ties or "index",
            "n_items": int(s.shape[1]),
            "depth": int(depth),
        },
    )
    return result if query_groups is None else result.with_groups(query_groups)
