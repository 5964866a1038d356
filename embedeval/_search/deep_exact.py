"""The pieces of the deep ranking that decide order: error bounds and exact resolution of near-ties.

See :mod:`embedeval._search.deep` for how they are used.
"""

from __future__ import annotations

import numpy as np

from .error_bound import FLOAT32_UNIT_ROUNDOFF, FLOAT64_UNIT_ROUNDOFF, error_bound, scale, terms
from .float64 import pair_distances


def error_bounds(q_norms: np.ndarray, max_norm: float, dim: int, euclidean: bool):
    """(float32, float64) bounds per query, shape (b,) each: E of a product value in that precision.

    Each bounds |value - exact| where value is one product of the query's factors with a
    reference's row (:class:`~embedeval._search.deep.DeepRanker`), summed in any order, and
    exact is :func:`embedeval._search.float64.exact_distance` minus, for the euclidean
    distance, ||q||^2: :func:`~embedeval._search.error_bound.error_bound` of the product plus that
    of the exact formula (t = d + 4 or d + 3 in float64). The product's terms: faiss's (d + 4 or
    d + 3) in float32; in float64 the euclidean product (-2q, 1).(r, ||r||^2) has d more, ||r||^2
    being computed with its own d roundings (2d + 4).
    """
    s, t = scale(q_norms, max_norm, euclidean), terms(dim, euclidean)
    exact = error_bound(s, t, FLOAT64_UNIT_ROUNDOFF, dim)
    bound32 = error_bound(s, t, FLOAT32_UNIT_ROUNDOFF, dim)
    bound64 = error_bound(s, t + (dim if euclidean else 0), FLOAT64_UNIT_ROUNDOFF, dim)
    return bound32 + exact, bound64 + exact


def exact_ranks(query, depth: int, values, bounds, classes, index, reference, euclidean: bool):
    """Ranks of one query's marked references within depth, from its candidates, every near-tie resolved.

    The candidates must hold every reference ranked before any marked one that can rank
    within depth (see :mod:`embedeval._search.deep`). They are sorted by value; neighbours
    whose values differ by no more than the sum of their bounds form runs, and a run holding
    more than one class (other references and marked ones, or marked ones of two grades) is
    recomputed with the exact formula and ordered by (exact distance, index).

    Parameters
    ----------
    query : numpy.ndarray of shape (d,), float32
    depth : int
    values, bounds : numpy.ndarray of shape (m,), float64
        Each candidate's product value and its error bound.
    classes : numpy.ndarray of shape (m,), float64
        0 for other references; a marked reference's grade (> 0; 1 for binary relevance).
    index : numpy.ndarray of shape (m,), int
        Each candidate's reference index (the tie rule's lower index first).
    reference : numpy.ndarray of shape (n_references, d), float32
    euclidean : bool

    Returns
    -------
    ranks, grades : numpy.ndarray of shape (h,), float64
        1-based ranks, ascending, of the marked references within depth, and their classes.
    """
    order = np.argsort(values, kind="stable")
    values, bounds, classes, index = values[order], bounds[order], classes[order], index[order]
    starts = np.ones(values.size, dtype=bool)
    starts[1:] = np.diff(values) > bounds[1:] + bounds[:-1]
    run = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    # A run is mixed when its classes are not all equal: its smallest and largest differ.
    mixed = np.minimum.reduceat(classes, first) < np.maximum.reduceat(classes, first) if first.size else first
    members = np.flatnonzero(mixed[run]) if first.size else first
    if members.size:
        exact = pair_distances(
            query[None, :], np.zeros(members.size, dtype=np.int64), index[members], reference.__getitem__, euclidean
        )
        within = np.lexsort((index[members], exact, run[members]))
        classes[members] = classes[members][within]
    head = classes[:depth]
    at = np.flatnonzero(head > 0)
    return at + 1.0, head[at]
